export * from "./gen/payments/deposit/v1/deposit_pb.js";
export * from "./gen/payments/deposit/v1/events_pb.js";
