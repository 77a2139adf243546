// The layering `pnpm test` checks (`pnpm layers`), on resolved paths: a workspace package
// (`@payments/deposit-service`) resolves through its "source" export to the folder it lives in
// (`services/deposit/src/...`), so these rules hold for relative imports and package imports alike.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "services-stay-apart",
      comment:
        "A service never imports another service's source, tests included: it talks to it over RPC, and a test that needs a peer service gets it from @payments/testing.",
      severity: "error",
      from: { path: "^services/([^/]+)/" },
      to: { path: "^services/", pathNot: "^services/$1/" },
    },
    {
      name: "edges-import-no-service",
      comment: "The gateway, the console and the CLI reach services over RPC only; their tests get services from @payments/testing.",
      severity: "error",
      from: { path: "^(gateway|console|packages/cli)/" },
      to: { path: "^services/" },
    },
    {
      name: "console-sides-stay-apart",
      comment:
        "The console's two sides share a page kit, never each other: operators' pages (console/src/operator) import nothing of the merchant dashboard (console/src/merchant), and the dashboard nothing of the operators' pages. What both need lives in console/src/shared (layout, tables, forms, amounts and times, timeline, refusals, texts) or console/src/identity (accounts, sessions, sign-in, TOTP, mail).",
      severity: "error",
      from: { path: "^console/src/(operator|merchant)/" },
      to: { path: "^console/src/(operator|merchant)/", pathNot: "^console/src/$1/" },
    },
    {
      name: "console-kit-sits-below",
      comment:
        "console/src/shared is the page kit under both sides and console/src/identity the accounts under both: neither imports a side's pages (and the kit imports no account code), so either side can change without the other.",
      severity: "error",
      from: { path: "^console/src/(shared|identity)/" },
      to: { path: "^console/src/(operator|merchant|api)/" },
    },
    {
      name: "console-kit-holds-no-accounts",
      comment: "The page kit renders; who is signed in and what they may do is identity's.",
      severity: "error",
      from: { path: "^console/src/shared/" },
      to: { path: "^console/src/identity/" },
    },
    {
      name: "only-the-all-in-one-composes",
      comment:
        "Only packages/all-in-one puts services together in one process (and @payments/testing and the end-to-end tests, which start them for tests, and the chaos run, which plugs its bank into the payout service as a deployment plugs in its connector). No library, edge or example depends on a service.",
      severity: "error",
      from: { path: "^(packages|gateway|console|examples)/", pathNot: "^packages/(all-in-one|testing|chaos)/" },
      to: { path: "^services/" },
    },
    {
      name: "kit-holds-no-domain",
      comment:
        "The kit is the runtime every service shares: it imports no service, no edge, no composer and no domain record (what an event means lives in @payments/contracts).",
      severity: "error",
      from: { path: "^packages/kit/src/" },
      to: { path: "^(services|gateway|console|packages/(access|all-in-one|cli|records|sdk|bench|testing))/" },
    },
    {
      name: "access-sits-on-the-kit",
      comment:
        "@payments/access (who calls: identities, access tables, approvals, audit) sits on the kit and the contracts only: it imports no service, no edge, no composer and no domain record, and the kit never imports it (the kit's CallGuard is the seam).",
      severity: "error",
      from: { path: "^packages/access/src/" },
      to: { path: "^(services|gateway|console|packages/(all-in-one|cli|records|sdk|bench|testing|chaos))/" },
    },
    {
      name: "contracts-stand-alone",
      comment: "@payments/contracts (protos, topics, status names) is the bottom layer: it imports nothing of ours.",
      severity: "error",
      from: { path: "^packages/contracts/src/" },
      to: { path: "^(services|gateway|console|packages/(?!contracts/))" },
    },
    {
      name: "testing-only-in-tests",
      comment: "@payments/testing is a dev dependency: only tests, the bench and the chaos run import it, never a deployed package's source.",
      severity: "error",
      from: { pathNot: "^(test/|packages/(testing|bench|chaos)/|[^/]+/[^/]+/test/|gateway/test/|console/test/)" },
      to: { path: "^packages/testing/" },
    },
    {
      name: "services-import-no-edge",
      comment:
        "A service's source depends on the kit, the contracts, the records and the signing, never on an edge (gateway, CLI, SDK), the composer or the bench. (Its tests may drive it through the CLI, as operators do.)",
      severity: "error",
      from: { path: "^services/[^/]+/src/" },
      to: { path: "^(gateway|console|packages/(cli|sdk|all-in-one|bench))/" },
    },
    {
      name: "workspace-imports-resolve",
      comment:
        "Every import resolves: a workspace package imported without being declared in the importer's package.json (so not linked into its node_modules) would otherwise slip past every rule above.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "no-dist-imports",
      comment: "Sources import each other's source (the \"source\" export condition), never a compiled dist/.",
      severity: "error",
      from: { pathNot: "(^|/)dist/" },
      to: { path: "(^|/)dist/" },
    },
  ],
  options: {
    // A compiled dist/ is not followed (and so not checked: it mirrors its source), but stays
    // visible as a dependency, so an import of one is caught.
    doNotFollow: { path: "(^|/)(node_modules|dist)/" },
    exclude: { path: "(^|/)(node_modules|gen)/|^packages/lint/fixtures/" },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["source", "import", "types", "default"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
