import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AssertionSigner } from "@payments/access";
import type { ServiceDirectory, ServiceName } from "../service-clients.js";

/** A signed-in person's clients: a client of `service` whose every call carries the person's 60-second assertion. */
export type PersonClients = <S extends DescService>(service: S, serviceName?: ServiceName) => Client<S>;

/**
 * The clients of one signed-in person (an operator, a merchant's user), for both sides' pages. A
 * service with no address (a console started without it) is the refusal a page words as "does not
 * answer", not an error of the page.
 */
export function clientsOf(services: ServiceDirectory, signer: AssertionSigner): PersonClients {
  return (service, serviceName) => {
    try {
      return services.client(service, signer, serviceName);
    } catch (err) {
      throw new ConnectError((err as Error).message, Code.Unavailable);
    }
  };
}
