// The linter `pnpm test` runs (`pnpm lint`): typescript-eslint's type-checked rules over every
// source and test file of the workspace, typed by the root tsconfig.json (one program for all).
// The rules that matter most here are the ones that catch lost work and wrong branches in money
// code: a promise nobody awaits, a promise where a callback was meant, an `await` on a value that
// is not a promise, a switch that forgets a status, and a condition that is always true or false.
import js from "@eslint/js";
import { fileURLToPath } from "node:url";
import tseslint from "typescript-eslint";

const root = fileURLToPath(new URL("../..", import.meta.url));

export default tseslint.config(
  {
    basePath: root,
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/gen/**",
      "packages/sdk/src/openapi.ts",
      "var/**",
      "scratch/**",
      "packages/lint/fixtures/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs",
    ],
  },
  {
    basePath: root,
    files: ["**/*.ts"],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ["./tsconfig.json"],
        tsconfigRootDir: root,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-unnecessary-condition": "error",
      // Off, deliberately: handlers implement async interfaces (Connect services, fakes of them)
      // and an `async` function without `await` still turns a throw into a rejection, which the
      // callers rely on; removing `async` to satisfy the rule would change behaviour.
      "@typescript-eslint/require-await": "off",
      // Off, deliberately: our handles (`stop`, status tables' `toProto`) are closures declared
      // with method syntax in their interfaces; they do not use `this`, which the rule cannot see.
      "@typescript-eslint/unbound-method": "off",
    },
  },
);
