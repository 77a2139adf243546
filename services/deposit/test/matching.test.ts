import test from "ava";
import { AMOUNT_ONLY_SCORE, matchTransfer, type MatchCandidate, type MatchResult, type TransferFacts } from "../src/matching.js";
import { newReference, REFERENCE_ALPHABET, REFERENCE_LENGTH } from "../src/reference.js";

function candidate(id: string, reference: string, requestedAmount: number, extra: Partial<MatchCandidate> = {}): MatchCandidate {
  return { id, reference, requestedAmount, currency: "TRY", customerName: "", status: "pending", createdAt: 0, ...extra };
}
function transfer(amount: number, description: string, senderName = "", currency = "TRY"): TransferFacts {
  return { amount, currency, senderName, description };
}
const ids = (r: MatchResult) => (r.kind === "review" ? r.candidates.map((c) => c.depositId) : []);

const A = candidate("dep_a", "K7M2QX9P", 1500, { customerName: "Ayşe Yılmaz" });
const B = candidate("dep_b", "R4T8WZ3N", 750, { customerName: "Mehmet Kaya" });

// a) Reference

for (const [label, description] of [
  ["exact", "K7M2QX9P"],
  ["with spaces", "Ödeme ref K7M2 QX9P"],
  ["with dashes", "ref: k7m2-qx9p teşekkürler"],
  ["lower case", "havale k7m2qx9p"],
  ["with dots", "K7M2.QX9P"],
] as const) {
  test(`a reference ${label} in the description matches its deposit`, (t) => {
    t.deepEqual(matchTransfer(transfer(1500, description, "YILMAZ AYŞE"), [A, B]), {
      kind: "matched",
      depositId: "dep_a",
      late: false,
      by: "reference",
      score: 1,
      reasons: ["reference exact", "name 1.00", "amount exact"],
      amountRelation: "exact",
    });
  });
}

test("reasons state amounts in lira, from kuruş exactly: 450.00 of 500.00 TRY", (t) => {
  const r = matchTransfer(transfer(45_000, "K7M2QX9P"), [candidate("dep_x", "K7M2QX9P", 50_000)]);
  t.deepEqual(r.kind === "matched" && r.reasons, ["reference exact", "amount 450.00 of 500.00 TRY (short)"]);
  const odd = matchTransfer(transfer(100_001, "K7M2QX9P"), [candidate("dep_x", "K7M2QX9P", 99)]);
  t.deepEqual(odd.kind === "matched" && odd.reasons, ["reference exact", "amount 1000.01 of 0.99 TRY (over)"]);
  const none = matchTransfer(transfer(12_345, "no reference"), [candidate("dep_x", "K7M2QX9P", 50_000)]);
  t.true(none.kind === "unmatched" && none.reason.includes("(123.45 TRY)"), JSON.stringify(none));
});

test("a reference wins whatever the amount and name, and reports both", (t) => {
  const r = matchTransfer(transfer(1450, "K7M2QX9P", "Ali Demir"), [A, B]);
  t.like(r, { kind: "matched", depositId: "dep_a", by: "reference", amountRelation: "under" });
  t.deepEqual(r.kind === "matched" && r.reasons, ["reference exact", "name 0.00", "amount 14.50 of 15.00 TRY (short)"]);
  const over = matchTransfer(transfer(1550, "K7M2QX9P"), [A]);
  t.deepEqual(over.kind === "matched" && [over.reasons, over.amountRelation], [["reference exact", "amount 15.50 of 15.00 TRY (over)"], "over"]);
});

test("without a known name, a reference match reports no name reason", (t) => {
  const r = matchTransfer(transfer(750, "R4T8WZ3N", "Mehmet Kaya"), [B, { ...A, customerName: null }]);
  t.deepEqual(r.kind === "matched" && r.reasons, ["reference exact", "name 1.00", "amount exact"]);
  const r2 = matchTransfer(transfer(1500, "K7M2QX9P", ""), [{ ...A, customerName: null }]);
  t.deepEqual(r2.kind === "matched" && r2.reasons, ["reference exact", "amount exact"]);
});

test("an expired deposit matched by reference is a late match", (t) => {
  const r = matchTransfer(transfer(1500, "K7M2QX9P", "Ayşe Yılmaz"), [{ ...A, status: "expired" }, B]);
  t.like(r, { kind: "matched", depositId: "dep_a", late: true, by: "reference" });
  t.deepEqual(r.kind === "matched" && r.reasons, ["reference exact", "name 1.00", "amount exact", "deposit expired"]);
});

test("a description carrying the references of several deposits goes to review, ranked", (t) => {
  const r = matchTransfer(transfer(750, "K7M2QX9P R4T8WZ3N", "Mehmet Kaya"), [A, B]);
  t.like(r, { kind: "review", reason: "the description carries the references of 2 deposits" });
  t.deepEqual(ids(r), ["dep_b", "dep_a"]);
  t.deepEqual(r.kind === "review" && r.candidates[0]!.reasons, ["reference exact", "name 1.00", "amount exact"]);
});

test("two deposits with the same reference go to review", (t) => {
  const r = matchTransfer(transfer(1500, "K7M2QX9P"), [A, { ...B, reference: "K7M2QX9P" }]);
  t.is(r.kind, "review");
  t.deepEqual(ids(r), ["dep_a", "dep_b"]);
});

// b) Sender name with the exact amount

test("one deposit whose customer name and amount fit matches by name and amount", (t) => {
  t.deepEqual(matchTransfer(transfer(1500, "havale", "YILMAZ AYSE NUR"), [A, B, candidate("dep_c", "ZZZZ2222", 1500, { customerName: "Ali Demir" })]), {
    kind: "matched",
    depositId: "dep_a",
    late: false,
    by: "name_amount",
    score: 0.9,
    reasons: ["name 0.90", "amount exact"],
    amountRelation: "exact",
  });
});

test("two pending deposits fitting name and amount go to review, both ranked", (t) => {
  const A2 = candidate("dep_a2", "ZZZZ2222", 1500, { customerName: "Ayşe Nur Yılmaz", createdAt: 5 });
  const r = matchTransfer(transfer(1500, "havale", "Ayşe Yılmaz"), [A2, A, B]);
  t.like(r, { kind: "review", reason: "the sender name and amount fit 2 pending deposits" });
  t.deepEqual(ids(r), ["dep_a", "dep_a2"]);
  t.true(r.kind === "review" && r.candidates[0]!.score > r.candidates[1]!.score);
});

test("a pending deposit is preferred to an expired one fitting name and amount", (t) => {
  const old = candidate("dep_old", "ZZZZ2222", 1500, { customerName: "Ayşe Yılmaz", status: "expired" });
  const r = matchTransfer(transfer(1500, "havale", "Ayşe Yılmaz"), [old, A]);
  t.like(r, { kind: "matched", depositId: "dep_a", late: false, by: "name_amount", score: 1 });
  t.deepEqual(r.kind === "matched" && r.reasons, ["name 1.00", "amount exact", "preferred to 1 expired deposit"]);
});

test("a single expired deposit fitting name and amount is a late match; two go to review", (t) => {
  const old = candidate("dep_old", "ZZZZ2222", 1500, { customerName: "Ayşe Yılmaz", status: "expired" });
  t.like(matchTransfer(transfer(1500, "", "Ayşe Yılmaz"), [old, B]), { kind: "matched", depositId: "dep_old", late: true, by: "name_amount" });
  const older = { ...old, id: "dep_older", reference: "YYYY3333" };
  t.like(matchTransfer(transfer(1500, "", "Ayşe Yılmaz"), [old, older]), { kind: "review", reason: "the sender name and amount fit 2 expired deposits" });
});

// c) The amount alone

test("exactly one pending deposit of the amount matches by amount", (t) => {
  t.deepEqual(matchTransfer(transfer(750, "havale"), [A, B]), {
    kind: "matched",
    depositId: "dep_b",
    late: false,
    by: "amount",
    score: AMOUNT_ONLY_SCORE,
    reasons: ["amount exact"],
    amountRelation: "exact",
  });
});

test("an amount match with a neutral name reports it; an expired deposit of the amount is ignored and said", (t) => {
  const r = matchTransfer(transfer(750, "", "Mehmet Demir"), [B, candidate("dep_x", "YYYY3333", 750, { status: "expired" })]);
  t.like(r, { kind: "matched", depositId: "dep_b", by: "amount" });
  t.deepEqual(r.kind === "matched" && r.reasons, ["name 0.50", "amount exact", "1 expired deposit of this amount ignored"]);
});

test("a sender name against the only pending deposit of the amount goes to review", (t) => {
  const r = matchTransfer(transfer(750, "", "Zeynep Arslan"), [A, B]);
  t.like(r, { kind: "review", reason: "the amount fits one pending deposit but the sender name does not (0.00)" });
  t.deepEqual(ids(r), ["dep_b"]);
});

test("several pending deposits of the amount go to review", (t) => {
  const C = candidate("dep_c", "ZZZZ2222", 750, { createdAt: 9 });
  const r = matchTransfer(transfer(750, "havale"), [B, C]);
  t.like(r, { kind: "review", reason: "2 pending deposits await 7.50 TRY; no reference or matching sender name" });
  t.deepEqual(ids(r), ["dep_c", "dep_b"]); // equal scores: the newer first
});

test("an expired deposit is never matched on the amount alone", (t) => {
  const r = matchTransfer(transfer(750, "havale"), [{ ...B, status: "expired" }]);
  t.deepEqual(r, { kind: "unmatched", reason: "no reference or matching sender name, and no pending deposit of this amount (7.50 TRY) on this account; 1 expired deposit of this amount" });
});

// d) Otherwise

test("a fitting name with another amount goes to review", (t) => {
  const r = matchTransfer(transfer(1450, "havale", "AYŞE YILMAZ"), [A, B]);
  t.like(r, { kind: "review", reason: "the sender name fits but the amount differs; no reference in the description" });
  t.deepEqual(r.kind === "review" && r.candidates, [{ depositId: "dep_a", score: 0.593, reasons: ["name 1.00", "amount 14.50 of 15.00 TRY (short)"] }]);
});

test("no candidates, another amount or another currency match nothing", (t) => {
  t.deepEqual(matchTransfer(transfer(1500, "K7M2QX9P"), []), { kind: "unmatched", reason: "no pending deposit is assigned to this account" });
  t.deepEqual(matchTransfer(transfer(1, "havale"), [A, B]), { kind: "unmatched", reason: "no reference or matching sender name, and no pending deposit of this amount (0.01 TRY) on this account" });
  t.deepEqual(matchTransfer(transfer(1500, "K7M2QX9P", "Ayşe Yılmaz", "EUR"), [A, B]), {
    kind: "unmatched",
    reason: "no deposit on this account is in EUR; the description carries the reference of a TRY deposit",
  });
});

test("a deposit in another currency is ignored even when its reference is given", (t) => {
  const euro = candidate("dep_eur", "EEEE2222", 1500, { currency: "EUR", customerName: "Ayşe Yılmaz" });
  t.like(matchTransfer(transfer(1500, "EEEE2222", "Ayşe Yılmaz"), [euro, A]), { kind: "matched", depositId: "dep_a", by: "name_amount" });
  t.like(matchTransfer(transfer(750, "EEEE2222"), [euro, B]), { kind: "matched", depositId: "dep_b", by: "amount" });
});

test("a candidate without a status is pending (older callers)", (t) => {
  const legacy: MatchCandidate = { ...B };
  delete legacy.status;
  t.like(matchTransfer(transfer(750, ""), [legacy]), { kind: "matched", depositId: "dep_b", late: false, by: "amount" });
});

// reference.ts

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
