import test from "ava";
import fc from "fast-check";
import { matchTransfer, type MatchCandidate } from "../src/matching.js";

const names = ["Ayşe Yılmaz", "AYSE YILMAZ", "Mehmet Kaya", "Ali Demir", "Zeynep Arslan", "ABC Tekstil Ltd. Şti.", "", "Ayşe Nur Yılmaz"];
const references = ["K7M2QX9P", "R4T8WZ3N", "ZZZZ2222", "ABCD2345"];
const amounts = [500, 750, 1500, 1450];
const currencies = ["TRY", "EUR"];

const candidates = fc
  .uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 4 }),
      reference: fc.constantFrom(...references),
      requestedAmount: fc.constantFrom(...amounts),
      currency: fc.constantFrom(...currencies),
      customerName: fc.constantFrom(...names),
      status: fc.constantFrom("pending" as const, "expired" as const),
      createdAt: fc.integer({ min: 0, max: 10 }),
    }),
    { selector: (c) => c.id, maxLength: 6 },
  )
  .map((cs): MatchCandidate[] => cs);

const transfers = fc.record({
  amount: fc.constantFrom(...amounts),
  currency: fc.constantFrom(...currencies),
  senderName: fc.constantFrom(...names),
  description: fc.oneof(fc.constantFrom(...references).map((r) => `ref ${r.slice(0, 4)}-${r.slice(4).toLowerCase()}`), fc.constantFrom("havale", "", "K7M2QX9P R4T8WZ3N")),
});

test("property: a match or a review candidate is always in the transfer's currency", (t) => {
  fc.assert(
    fc.property(transfers, candidates, (transfer, cs) => {
      const r = matchTransfer(transfer, cs);
      const currencyOf = (id: string) => cs.find((c) => c.id === id)!.currency;
      if (r.kind === "matched") return currencyOf(r.depositId) === transfer.currency;
      if (r.kind === "review") return r.candidates.length > 0 && r.candidates.every((c) => currencyOf(c.depositId) === transfer.currency);
      return true;
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test("property: a match by amount means exactly one pending candidate in that currency has that amount", (t) => {
  fc.assert(
    fc.property(transfers, candidates, (transfer, cs) => {
      const r = matchTransfer(transfer, cs);
      if (r.kind !== "matched" || r.by !== "amount") return true;
      const same = cs.filter((c) => c.status === "pending" && c.currency === transfer.currency && c.requestedAmount === transfer.amount);
      return same.length === 1 && same[0]!.id === r.depositId;
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test("property: scores are in [0,1], reviews are ranked best first, late means expired", (t) => {
  fc.assert(
    fc.property(transfers, candidates, (transfer, cs) => {
      const r = matchTransfer(transfer, cs);
      if (r.kind === "matched") {
        const c = cs.find((x) => x.id === r.depositId)!;
        return r.score >= 0 && r.score <= 1 && r.late === (c.status === "expired") && r.reasons.length > 0;
      }
      if (r.kind === "review") return r.candidates.every((c, i) => c.score >= 0 && c.score <= 1 && (i === 0 || r.candidates[i - 1]!.score >= c.score));
      return r.reason !== "";
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test("property: the result does not depend on the order of the candidates", (t) => {
  fc.assert(
    fc.property(transfers, candidates, (transfer, cs) => {
      const a = matchTransfer(transfer, cs);
      const b = matchTransfer(transfer, [...cs].reverse());
      return JSON.stringify(a) === JSON.stringify(b);
    }),
    { numRuns: 2000 },
  );
  t.pass();
});
