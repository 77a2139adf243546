export * from "./gen/payments/bankcatalog/v1/bank_catalog_pb.js";
export * from "./gen/payments/bankcatalog/v1/events_pb.js";
