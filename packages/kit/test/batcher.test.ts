import test from "ava";
import { createBatcher } from "../src/index.js";

// Issue 22: items handed over together as they come (the callback-sender's records, the payout
// worker's answers): the first at once, those that come meanwhile in the next batch.

const later = () => new Promise((resolve) => setTimeout(resolve, 5));

test("the first item goes alone and at once; those that come meanwhile go together, up to maxBatch, each caller getting its own result", async (t) => {
  const batches: number[][] = [];
  const batched = createBatcher<number, number>({
    maxBatch: 4,
    handle: async (batch) => {
      batches.push(batch);
      await later();
      return batch.map((n) => n * 10);
    },
  });
  const results = await Promise.all(Array.from({ length: 9 }, (_, i) => batched(i)));
  t.deepEqual(results, Array.from({ length: 9 }, (_, i) => i * 10));
  t.deepEqual(batches, [[0], [1, 2, 3, 4], [5, 6, 7, 8]]);
});

test("afterTurn: items of the same turn share the first batch; a key never appears twice in one batch", async (t) => {
  const batches: string[][] = [];
  const batched = createBatcher<string, string>({
    afterTurn: true,
    key: (item) => item,
    handle: async (batch) => {
      batches.push(batch);
      return batch;
    },
  });
  await Promise.all(["a", "b", "a", "c"].map((item) => batched(item)));
  t.deepEqual(batches, [["a", "b", "c"], ["a"]]);
});

test("a failed batch: without alone each item gets the error; with alone each goes again on its own and only the bad one fails", async (t) => {
  const plain = createBatcher<number, number>({
    handle: async () => {
      throw new Error("down");
    },
  });
  await t.throwsAsync(plain(1), { message: "down" });

  const failures: number[] = [];
  const robust = createBatcher<number, number>({
    afterTurn: true,
    handle: async (batch) => {
      if (batch.includes(13)) throw new Error("batch refused");
      return batch;
    },
    alone: async (n) => {
      if (n === 13) throw new Error("thirteen");
      return -n;
    },
    onBatchFailure: (_err, size) => void failures.push(size),
  });
  const outcomes = await Promise.allSettled([1, 13, 2].map((n) => robust(n)));
  t.deepEqual(
    outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message)),
    [-1, "thirteen", -2],
  );
  t.deepEqual(failures, [3]);
  t.is(await robust(5), -5, "a batch of one goes alone");
});
