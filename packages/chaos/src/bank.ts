import http from "node:http";
import type { AddressInfo } from "node:net";

/** What the bank answers a transfer: the connector contract's outcomes. */
type Outcome = { outcome: "completed"; bankReference: string } | { outcome: "failed"; reason: string; bankReference: string } | { outcome: "accepted"; bankReference: string };

interface Instruction {
  idempotencyKey: string;
  amount: number;
  currency: string;
  iban: string;
  accountName: string;
  description: string;
}

/**
 * The bank behind the live connector (a mock, as the house rules allow for the bank
 * connector only): answers each transfer by its recipient IBAN's last digit (0–5 completed,
 * 6–7 failed, 8–9 accepted: an operator decides), idempotent on the key as a real bank's API
 * is, and counts every call per key, so the report can tell a retried send (same key, the
 * contract allows it after a crash) from money moved twice (never).
 */
export class FakeBank {
  /** Calls per idempotency key. */
  readonly calls = new Map<string, number>();
  /** The first instruction per key: what moved. */
  readonly executed = new Map<string, Instruction>();
  /** A second call whose instruction differs from the first's (amount, IBAN, name): must be none. */
  readonly conflicting: string[] = [];
  private server?: http.Server;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        let instruction: Instruction;
        try {
          instruction = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Instruction;
        } catch {
          res.writeHead(400).end();
          return;
        }
        const key = instruction.idempotencyKey;
        this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
        const first = this.executed.get(key);
        if (!first) this.executed.set(key, instruction);
        else if (first.amount !== instruction.amount || first.iban !== instruction.iban || first.accountName !== instruction.accountName) this.conflicting.push(key);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(FakeBank.outcome(first ?? instruction)));
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    this.port = (server.address() as AddressInfo).port;
  }

  static outcome(instruction: Instruction): Outcome {
    const digit = Number(instruction.iban.at(-1));
    const bankReference = `BNK-${instruction.idempotencyKey.slice(-12)}`;
    if (digit <= 5) return { outcome: "completed", bankReference };
    if (digit <= 7) return { outcome: "failed", reason: "ACCOUNT_CLOSED", bankReference };
    return { outcome: "accepted", bankReference };
  }

  /** Keys the connector sent more than once (same key: the bank moved the money once). */
  resent(): string[] {
    return [...this.calls].filter(([, n]) => n > 1).map(([key]) => key);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}
