export * from "./gen/payments/merchant/v1/merchant_pb.js";
export * from "./gen/payments/merchant/v1/events_pb.js";
export * from "./merchant-events.js";
