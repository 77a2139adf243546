import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

/**
 * A seeded source of numbers in [0, 1) (pure-rand's xoroshiro128+), for property tests over
 * generated data: the same seed gives the same data on every run, so a failure replays.
 */
export function seededRandom(seed: number): () => number {
  const generator = xoroshiro128plus(seed | 0);
  return () => (generator.next() >>> 0) / 2 ** 32;
}
