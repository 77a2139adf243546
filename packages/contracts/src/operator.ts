export * from "./gen/payments/operator/v1/operator_pb.js";
