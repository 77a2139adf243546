import test from "ava";
import { bankInitials, bankTileSvg } from "../src/bank-tile.js";
import { logoUrl } from "../src/routes/available-banks.js";

test("initials come from the distinctive words of a bank's name", (t) => {
  t.is(bankInitials("Türkiye İş Bankası"), "İŞ");
  t.is(bankInitials("Yapı ve Kredi Bankası"), "YK");
  t.is(bankInitials("Türkiye Cumhuriyeti Ziraat Bankası"), "Zİ", "Turkish upper case of i is İ");
  t.is(bankInitials("QNB Bank"), "QNB");
  t.is(bankInitials("Akbank T.A.Ş."), "AK");
  t.is(bankInitials("Bank"), "BA");
  t.is(bankInitials(""), "?");
});

test("the tile is a self-contained SVG with the name escaped", (t) => {
  const svg = bankTileSvg({ name: `<script>alert("x")</script> & Co`, code: "0001" });
  t.true(svg.startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  t.false(svg.includes("<script>"));
  t.false(/href|url\(/i.test(svg));
  t.true(svg.includes("&lt;script&gt;"));
});

test("logo: a catalog path is prefixed with the public base URL, an absolute URL kept, anything else replaced by the tile", (t) => {
  const base = "https://pay.example.com";
  t.is(logoUrl({ logoUrl: "/assets/banks/0064.svg", code: "0064" }, base), "https://pay.example.com/assets/banks/0064.svg");
  t.is(logoUrl({ logoUrl: "https://cdn.example.com/isbank.png", code: "0064" }, base), "https://cdn.example.com/isbank.png");
  t.is(logoUrl({ logoUrl: "", code: "0064" }, base), "https://pay.example.com/assets/banks/0064.svg");
  t.is(logoUrl({ logoUrl: "//evil.example/x.png", code: "0064" }, base), "https://pay.example.com/assets/banks/0064.svg");
  t.is(logoUrl({ logoUrl: "javascript:alert(1)", code: "0064" }, base), "https://pay.example.com/assets/banks/0064.svg");
});
