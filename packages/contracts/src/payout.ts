export * from "./gen/payments/payout/v1/payout_pb.js";
export * from "./gen/payments/payout/v1/events_pb.js";
