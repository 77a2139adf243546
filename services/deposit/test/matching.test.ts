import test from "ava";
import { matchTransfer, type MatchCandidate } from "../src/matching.js";
import { descriptionHasReference, newReference, normalizeDescription, REFERENCE_ALPHABET, REFERENCE_LENGTH } from "../src/reference.js";

function candidate(id: string, reference: string, requestedAmount: number, currency = "TRY"): MatchCandidate {
  return { id, reference, requestedAmount, currency, createdAt: 0 };
}

const A = candidate("dep_a", "K7M2QX9P", 50_000);
const B = candidate("dep_b", "R4T8WZ3N", 75_000);

test("a reference in the description wins, whatever the amount paid", (t) => {
  t.deepEqual(matchTransfer({ amount: 12_345, currency: "TRY", reference: "Ödeme ref: k7m2-qx9p teşekkürler" }, [A, B]), {
    kind: "matched",
    depositId: "dep_a",
    by: "reference",
  });
});

test("without a reference, exactly one pending deposit of the amount matches", (t) => {
  t.deepEqual(matchTransfer({ amount: 75_000, currency: "TRY", reference: "" }, [A, B]), { kind: "matched", depositId: "dep_b", by: "amount" });
});

test("two pending deposits awaiting the same amount are left to an operator", (t) => {
  const result = matchTransfer({ amount: 50_000, currency: "TRY", reference: "havale" }, [A, candidate("dep_c", "ZZZZ2222", 50_000)]);
  t.is(result.kind, "unmatched");
  t.regex(result.kind === "unmatched" ? result.reason : "", /several pending deposits/);
});

test("a description carrying two references is ambiguous, not the first one", (t) => {
  t.is(matchTransfer({ amount: 50_000, currency: "TRY", reference: "K7M2QX9P R4T8WZ3N" }, [A, B]).kind, "unmatched");
});

test("nothing pending on the account, another amount or another currency match nothing", (t) => {
  t.is(matchTransfer({ amount: 50_000, currency: "TRY", reference: "K7M2QX9P" }, []).kind, "unmatched");
  t.is(matchTransfer({ amount: 1, currency: "TRY", reference: "" }, [A, B]).kind, "unmatched");
  t.is(matchTransfer({ amount: 50_000, currency: "EUR", reference: "K7M2QX9P" }, [A, B]).kind, "unmatched");
});

test("references are eight characters from an alphabet without look-alikes", (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const reference = newReference();
    t.is(reference.length, REFERENCE_LENGTH);
    t.true([...reference].every((c) => REFERENCE_ALPHABET.includes(c)));
    seen.add(reference);
  }
  t.true(seen.size > 1990, "references repeat far too often");
  t.false(/[01ILO]/.test(REFERENCE_ALPHABET));
});

test("a description is compared without case, spaces, punctuation or accents", (t) => {
  t.is(normalizeDescription(" ref: k7m2-qx9p / Şule "), "REFK7M2QX9PSULE");
  t.true(descriptionHasReference("ödeme k7m2 qx9p", "K7M2QX9P"));
  t.false(descriptionHasReference("K7M2QX9", "K7M2QX9P"));
  t.false(descriptionHasReference("anything", ""));
});
