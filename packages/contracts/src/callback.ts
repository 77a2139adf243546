export * from "./gen/payments/callback/v1/callback_pb.js";
