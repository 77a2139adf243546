export * from "./gen/payments/operator/v1/operator_pb.js";
export * from "./gen/payments/operator/v1/events_pb.js";
