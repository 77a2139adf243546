export * from "./gen/payments/bankcatalog/v1/bank_catalog_pb.js";
