import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { consoleCall, consoleUrl, forgetSession, loadSession, saveSession } from "../console-session.js";
import { CommandFailed } from "../errors.js";
import { prompt } from "../prompt.js";

/** `login` and `logout`: a CLI session with the console (CONSOLE_URL), cached for the commands that act as an operator. */
export function registerLoginCommands(program: Command, ctx: CommandContext): void {
  program
    .command("login")
    .description("sign in to the console as an operator; the session (12 h) is cached in ~/.config/payments/session.json (mode 0600)")
    .option("--email <email>", "your email (asked when left out)")
    .option("--password <password>", "your password (asked, hidden, when left out: prefer that, a flag stays in shell history)")
    .option("--totp <code>", "the code of your authenticator app, when you have enrolled one (asked when the console wants it)")
    .action(async (opts: { email?: string; password?: string; totp?: string }, cmd: Command) => {
      const { out, io } = ctx.session(cmd);
      const url = consoleUrl(io.env);
      const email = opts.email ?? (await prompt("Email: ", { flag: "--email" }));
      const password = opts.password ?? (await prompt("Password: ", { hidden: true, flag: "--password" }));
      const attempt = (totp?: string) => consoleCall(url, "POST", "/api/cli/sessions", { body: { email, password, ...(totp ? { totp } : {}) } });
      let answer;
      try {
        answer = await attempt(opts.totp);
      } catch (err) {
        // The password was right and a code is needed: ask for it once, unless it was given already.
        if (!(err instanceof CommandFailed) || !err.message.startsWith("TOTP_REQUIRED") || opts.totp !== undefined) throw err;
        answer = await attempt(await prompt("Authenticator code: ", { flag: "--totp" }));
      }
      const body = answer.body as { token: string; expiresAt: string; operator: { email: string; role: string; displayName: string } };
      const file = saveSession(io.env, { consoleUrl: url, token: body.token, expiresAt: body.expiresAt, email: body.operator.email, role: body.operator.role });
      if (out.json) return out.data({ email: body.operator.email, role: body.operator.role, expiresAt: body.expiresAt, sessionFile: file });
      out.line(`Signed in as ${body.operator.email} (${body.operator.role}) until ${body.expiresAt}.`);
    });

  program
    .command("logout")
    .description("end the cached console session (on the console too) and delete it")
    .action(async (_opts: unknown, cmd: Command) => {
      const { out, io } = ctx.session(cmd);
      const session = loadSession(io.env);
      if (session) {
        try {
          await consoleCall(session.consoleUrl, "DELETE", "/api/cli/sessions", { token: session.token });
        } catch (err) {
          // An ended session is ended; anything else (the console unreachable) is still worth saying.
          if (!(err instanceof CommandFailed && err.message.startsWith("UNAUTHENTICATED"))) throw err;
        }
      }
      forgetSession(io.env);
      if (out.json) return out.data({ signedOut: session !== undefined });
      out.line(session ? `Signed out ${session.email}.` : "No session was cached.");
    });
}
