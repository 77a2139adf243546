import { Command, CommanderError } from "commander";
import { DEFAULT_GRPC_URL } from "./clients.js";
import { registerAccountCommands } from "./commands/account.js";
import { registerApprovalCommands } from "./commands/approval.js";
import { registerAuditCommands } from "./commands/audit.js";
import { registerBalanceCommands } from "./commands/balance.js";
import { registerBankCommands } from "./commands/bank.js";
import { registerDepositCommands } from "./commands/deposit.js";
import { registerEventCommands } from "./commands/events.js";
import { registerFastCommands } from "./commands/fast.js";
import { registerIdentityCommands } from "./commands/identity.js";
import { registerLimitCommands } from "./commands/limit.js";
import { registerLoginCommands } from "./commands/login.js";
import { registerMerchantCommands } from "./commands/merchant.js";
import { registerMerchantUserCommands } from "./commands/merchant-users.js";
import { registerMerchantKeyCommands } from "./commands/merchant-keys.js";
import { registerOperatorAccountCommands } from "./commands/operator-accounts.js";
import { registerReconcileCommand } from "./commands/reconcile.js";
import { registerRequestCommand } from "./commands/request.js";
import { registerTransferCommands } from "./commands/transfer.js";
import { registerTransferReturnCommands } from "./commands/transfer-return.js";
import { registerWithdrawalCommands } from "./commands/withdrawal.js";
import { registerWithheldCreditCommands } from "./commands/withheld-credit.js";
import { CommandContext } from "./context.js";
import { describeFailure, EXIT_USAGE } from "./errors.js";
import type { Io } from "./io.js";

const ENVIRONMENT_HELP = `
Environment:
  GRPC_URL                     internal API of every service (default http://127.0.0.1:$GRPC_PORT, ${DEFAULT_GRPC_URL} when GRPC_PORT is unset, as \`pnpm start\` serves it)
  MERCHANT_SERVICE_URL         merchant service, for split deployments (default: GRPC_URL)
  BANK_CATALOG_SERVICE_URL     bank-catalog service, for split deployments (default: GRPC_URL)
  DEPOSIT_SERVICE_URL          deposit service, for split deployments (default: GRPC_URL)
  PAYOUT_SERVICE_URL           payout service (balance, withdrawal), for split deployments (default: GRPC_URL)
  CALLBACK_SENDER_SERVICE_URL  callback-sender service (events), for split deployments (default: GRPC_URL)
  INTERNAL_API_TOKEN           sent as "Authorization: Bearer <token>" when set (an extra network guard: it grants nothing by itself)
  WORKLOAD_KEY                 this CLI's workload key (Ed25519 PEM or its path), signing every call's workload identity;
                               default <DATA_DIR>/workloads/cli.key, which \`pnpm start\` makes (DATA_DIR default ./var)
  WORKLOAD_ID                  the SPIFFE ID WORKLOAD_KEY is for, when not spiffe://<WORKLOAD_TRUST_DOMAIN>/cli (a bank integration's own)
  WORKLOAD_TRUST_DOMAIN        the SPIFFE trust domain (default payments.local)
  GATEWAY_URL                  merchant API used by \`request\` (default http://localhost:$PORT, http://localhost:8080 when PORT is unset)
  CONSOLE_URL                  console used by \`login\` and \`operator\` (default http://127.0.0.1:$CONSOLE_PORT, http://127.0.0.1:8081 when CONSOLE_PORT is unset)
  PORT, GRPC_PORT, CONSOLE_PORT  the all-in-one's own settings: set in the shell that ran \`pnpm start\`, the defaults above follow them
  XDG_CONFIG_HOME              where \`login\` caches its session: $XDG_CONFIG_HOME/payments/session.json (default ~/.config)
  PAYMENTS_OPERATOR_TOKEN      a service account's token (\`operator token\`), exchanged at CONSOLE_URL for a 60-second assertion per call
  OPERATOR_ASSERTION_PRIVATE_KEY  the signing key, only for \`operator token\`

Amounts are whole kuruş (150.50 TRY is 15050); a negative adjustment is --amount -500 or --amount=-500. Exit codes: 0 ok, 1 failed, 2 bad usage.`;

/** A fresh program writing to `io`; nothing is shared between runs. */
export function buildProgram(io: Io): Command {
  const ctx = new CommandContext(io);
  const program = new Command("pnpm cli")
    .description("Operator command line of the payment gateway: merchants, banks, FAST, limits, receiving accounts, deposits and incoming transfers, balances and withdrawals, callback events.")
    .option("--grpc-url <url>", "internal API address, overriding GRPC_URL and the *_SERVICE_URL variables")
    .option("--json", "machine output: one JSON document on stdout")
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(add --help for usage)")
    .exitOverride()
    .addHelpText("after", ENVIRONMENT_HELP);

  registerMerchantCommands(program, ctx);
  const merchant = program.commands.find((c) => c.name() === "merchant");
  if (merchant) registerMerchantUserCommands(merchant, ctx);
  if (merchant) registerMerchantKeyCommands(merchant, ctx);
  registerBankCommands(program, ctx);
  registerFastCommands(program, ctx);
  registerLimitCommands(program, ctx);
  registerAccountCommands(program, ctx);
  registerDepositCommands(program, ctx);
  registerTransferCommands(program, ctx);
  registerTransferReturnCommands(program, ctx);
  registerWithheldCreditCommands(program, ctx);
  registerReconcileCommand(program, ctx);
  registerBalanceCommands(program, ctx);
  registerWithdrawalCommands(program, ctx);
  registerEventCommands(program, ctx);
  registerRequestCommand(program, ctx);
  registerLoginCommands(program, ctx);
  registerOperatorAccountCommands(program, ctx);
  registerApprovalCommands(program, ctx);
  registerAuditCommands(program, ctx);
  registerIdentityCommands(program, ctx);
  return program;
}

/** Runs one command line (without the node and script arguments) and returns the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed the message or the help already.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    const { line, exitCode } = describeFailure(err);
    io.stderr.write(`${line}\n`);
    return exitCode;
  }
}
