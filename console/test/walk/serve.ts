import { startStack } from "../service-harness.js";
import { seedDay } from "./seed.js";

/*
 * The walk's seeded day, served until Ctrl-C, for a look in a browser or for Lighthouse
 * (scripts/lighthouse.mjs): the five services in this process on MariaDB-free SQLite and a
 * console in front of them, with the walk's admin and merchant owner. Prints the environment
 * the Lighthouse script reads.
 *
 *   node --conditions=source --import tsx console/test/walk/serve.ts
 */
const stack = await startStack();
const day = await seedDay(stack);
const extra = [...day.operatorDetails, ...day.merchantDetails].join(",");
process.stdout.write(
  [
    `CONSOLE_URL=${stack.c.url}`,
    `OPERATOR_EMAIL=${day.admin.email}`,
    `OPERATOR_PASSWORD='${day.admin.password}'`,
    `MERCHANT_EMAIL=${day.merchantUser.email}`,
    `MERCHANT_PASSWORD='${day.merchantUser.password}'`,
    `LIGHTHOUSE_EXTRA_PATHS='${extra}'`,
    "",
  ].join("\n"),
);
const stop = () => {
  void stack.stop().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
