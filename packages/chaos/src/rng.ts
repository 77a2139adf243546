import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";

/**
 * A seeded random source (pure-rand's xoroshiro128+). The fault schedule and the load each
 * draw from their own stream, so the schedule a seed gives is the same however the load went.
 */
export class Random {
  private readonly generator: RandomGenerator;

  constructor(seed: number, stream: number) {
    this.generator = xoroshiro128plus((seed ^ Math.imul(stream + 1, 0x9e3779b1)) | 0);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return uniformInt(this.generator, min, max);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from nothing");
    return items[this.int(0, items.length - 1)]!;
  }

  /** One of `weights`' keys, each as likely as its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let at = this.int(0, Math.max(0, total - 1));
    for (const [key, weight] of entries) {
      if (at < weight) return key;
      at -= weight;
    }
    return entries.at(-1)![0];
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}
