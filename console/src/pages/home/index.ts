import { html } from "../../html.js";
import { text } from "../../i18n.js";
import { renderPage } from "../../layout.js";
import type { ConsoleRoute } from "../../route.js";

/** GET /: where a signed-in operator lands; the areas of work will be linked from here. */
export function homePages(): ConsoleRoute[] {
  return [
    {
      method: "GET",
      path: "/",
      access: "operator",
      handler: (ctx) => {
        const { operator, session } = ctx.state;
        const lang = ctx.state.lang;
        if (!operator) return;
        renderPage(ctx, {
          title: text(lang, "home.title"),
          body: html`<p>${text(lang, "home.intro", { name: operator.displayName, role: operator.role })}</p><p>${text(lang, "home.empty")}</p>`,
          operator,
          csrfToken: session?.csrfToken,
        });
      },
    },
  ];
}
