/** The shop's products: fixed, since the demo is about paying for them. Prices in kuruş, as the API counts. */
export interface Product {
  id: string;
  name: string;
  description: string;
  price: number;
}

export const PRODUCTS: readonly Product[] = [
  { id: "tea", name: "Rize Tea, 1 kg", description: "Black tea from the Black Sea coast.", price: 45_000 },
  { id: "towel", name: "Peshtemal Towel", description: "Hand-woven cotton, 100 × 180 cm.", price: 89_900 },
  { id: "coffee-set", name: "Turkish Coffee Set", description: "Copper cezve and two porcelain cups.", price: 150_000 },
];

export function productById(id: string): Product | undefined {
  return PRODUCTS.find((p) => p.id === id);
}

/** 150000 kuruş → "₺1.500,00", the way a Turkish shop shows it. */
export function formatAmount(amount: number, currency = "TRY"): string {
  return new Intl.NumberFormat("tr-TR", { style: "currency", currency }).format(amount / 100);
}
