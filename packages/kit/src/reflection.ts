import { createRegistry, toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import * as v1 from "@payments/contracts/reflection/v1";
import * as v1alpha from "@payments/contracts/reflection/v1alpha";

type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;

/**
 * gRPC server reflection (v1 and v1alpha), so grpcurl and `buf curl` work without the
 * protos. Answers from the descriptors compiled into the generated code.
 */
export function reflectionRoutes(router: ConnectRouter, services: readonly DescService[]): void {
  const files = new Map<string, DescFile>();
  const addFile = (file: DescFile): void => {
    if (files.has(file.name)) return;
    files.set(file.name, file);
    file.dependencies.forEach(addFile);
  };
  services.forEach((s) => addFile(s.file));
  const registry = createRegistry(...files.values());
  const serviceNames = services.map((s) => s.typeName);

  const encodeWithDeps = (file: DescFile, sent: Set<string>): Uint8Array[] => {
    const out: Uint8Array[] = [];
    const visit = (f: DescFile): void => {
      if (sent.has(f.name)) return;
      sent.add(f.name);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
      f.dependencies.forEach(visit);
    };
    visit(file);
    return out;
  };

  const findFileOfSymbol = (symbol: string): DescFile | undefined => {
    const direct = registry.get(symbol);
    if (direct && "file" in direct) return direct.file;
    // A method, field or enum value: look up its parent.
    const parent = symbol.slice(0, Math.max(0, symbol.lastIndexOf(".")));
    const outer = parent ? registry.get(parent) : undefined;
    return outer && "file" in outer ? outer.file : undefined;
  };

  const answer = (req: Request, sent: Set<string>) => {
    const r = req.messageRequest;
    const notFound = (what: string) => ({
      case: "errorResponse" as const,
      value: { errorCode: Code.NotFound, errorMessage: `${what} not found` },
    });
    switch (r.case) {
      case "listServices":
        return { case: "listServicesResponse" as const, value: { service: serviceNames.map((name) => ({ name })) } };
      case "fileByFilename": {
        const file = files.get(r.value);
        return file ? { case: "fileDescriptorResponse" as const, value: { fileDescriptorProto: encodeWithDeps(file, sent) } } : notFound(`file ${r.value}`);
      }
      case "fileContainingSymbol": {
        const file = findFileOfSymbol(r.value);
        return file ? { case: "fileDescriptorResponse" as const, value: { fileDescriptorProto: encodeWithDeps(file, sent) } } : notFound(`symbol ${r.value}`);
      }
      case "allExtensionNumbersOfType":
        return { case: "allExtensionNumbersResponse" as const, value: { baseTypeName: r.value, extensionNumber: [] } };
      case "fileContainingExtension":
        return notFound("extension");
      default:
        return { case: "errorResponse" as const, value: { errorCode: Code.InvalidArgument, errorMessage: "empty request" } };
    }
  };

  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const req of requests) yield { validHost: req.host, originalRequest: req, messageResponse: answer(req, sent) };
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const req of requests) yield { validHost: req.host, originalRequest: req, messageResponse: answer(req, sent) };
    },
  });
}
