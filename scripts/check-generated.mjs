// Fails when packages/contracts/src/gen differs from what `buf generate` makes of proto/ now.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const committed = "packages/contracts/src/gen";
const out = mkdtempSync(join(tmpdir(), "gen-"));
const template = join(out, "buf.gen.yaml");
writeFileSync(
  template,
  readFileSync("buf.gen.yaml", "utf8").replace(/out: .*/, `out: ${join(out, "gen")}`),
);
try {
  execFileSync("buf", ["generate", "--template", template], { stdio: "inherit" });
  const list = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? list(path) : [path];
    });
  const fresh = new Map(list(join(out, "gen")).map((p) => [relative(join(out, "gen"), p), readFileSync(p, "utf8")]));
  const current = new Map(list(committed).map((p) => [relative(committed, p), readFileSync(p, "utf8")]));
  const stale = [...new Set([...fresh.keys(), ...current.keys()])].filter((k) => fresh.get(k) !== current.get(k));
  if (stale.length > 0) {
    console.error(`generated code is stale; run \`pnpm generate\` and commit:\n  ${stale.join("\n  ")}`);
    process.exit(1);
  }
  console.log(`generated code is up to date (${fresh.size} files)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
