/**
 * The page's only script, inlined under the response's nonce. It is plain ES2017 kept
 * as text (not a compiled function), so what runs in the customer's browser is exactly
 * what is written here. It reads its data from the inert JSON block `#checkout-data`
 * and never writes HTML: every update is textContent, an attribute or `hidden`.
 *
 * What it does: counts down to expiresAt on the server's clock (the offset between the
 * server time of the last answer and the browser's clock), polls the status every
 * `pollMs` until the deposit is final, copies the IBAN and reference, and, for sandbox
 * merchants, posts "simulate payment".
 *
 * For screen readers: a status change and a copy are said through the one live region
 * `#live` (polite), and a status change moves focus to the new status heading, since the
 * control the customer was on (simulate) may just have been hidden. The countdown is not
 * announced at all: read out every second it would drown everything else.
 */
export const CHECKOUT_SCRIPT = `(function () {
  "use strict";
  var dataEl = document.getElementById("checkout-data");
  if (!dataEl) return;
  var data = JSON.parse(dataEl.textContent || "{}");
  var t = data.texts;
  var view = data.view;
  var pollMs = data.pollMs || 3000;
  var clockOffset = 0;
  var pollTimer = null;
  var tickTimer = null;
  var failures = 0;
  var stopped = false;

  function byId(id) { return document.getElementById(id); }
  function setText(id, text) { var el = byId(id); if (el) el.textContent = text; }
  function show(id, visible) { var el = byId(id); if (el) el.hidden = !visible; }
  function isFinal(status) { return status !== "pending"; }
  function fill(template, values) {
    return template.replace(/\\{([a-z]+)\\}/g, function (blank, name) { return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : blank; });
  }

  var liveTimer = null;
  function announce(message) {
    var live = byId("live");
    if (!live) return;
    // Emptied, then filled a moment later: the same words again (a second copy) are a change, so they are read again.
    live.textContent = "";
    if (liveTimer) clearTimeout(liveTimer);
    liveTimer = setTimeout(function () { live.textContent = message; }, 100);
  }

  function syncClock(v) {
    var server = Date.parse(v.serverTime);
    if (!isNaN(server)) clockOffset = server - Date.now();
  }
  function serverNow() { return Date.now() + clockOffset; }

  function formatAmount(amount, currency) {
    try {
      var format = new Intl.NumberFormat(t.locale, { style: "currency", currency: currency, currencyDisplay: "narrowSymbol" });
      var digits = format.resolvedOptions().maximumFractionDigits;
      return format.format(amount / Math.pow(10, digits == null ? 2 : digits));
    } catch (e) {
      return (amount / 100).toFixed(2) + " " + currency;
    }
  }
  function twoDigits(n) { return (n < 10 ? "0" : "") + n; }
  function formatRemaining(ms) {
    var s = Math.ceil(ms / 1000);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    var sec = s % 60;
    return (h > 0 ? h + ":" + twoDigits(m) : twoDigits(m)) + ":" + twoDigits(sec);
  }

  function tick() {
    if (isFinal(view.status)) return;
    var left = Date.parse(view.expiresAt) - serverNow();
    setText("countdown", left > 0 ? formatRemaining(left) : t.timeUp);
  }

  function stop() {
    stopped = true;
    if (pollTimer) clearTimeout(pollTimer);
    if (tickTimer) clearInterval(tickTimer);
  }

  function setStatus(name, title, text) {
    var changed = byId("checkout").getAttribute("data-status") !== name;
    byId("checkout").setAttribute("data-status", name);
    byId("status").className = "status status-" + name;
    setText("status-title", title);
    setText("status-text", text);
    if (!changed) return;
    document.title = t.pageTitle + ": " + title + (data.merchantName ? " \\u2013 " + data.merchantName : "");
    announce(title + ". " + text);
    var heading = byId("status-title");
    if (heading) heading.focus();
  }

  function hideDetails() {
    show("details", false);
    show("no-account", false);
    show("countdown-row", false);
    show("simulate-box", false);
  }

  function apply(v) {
    view = v;
    syncClock(v);
    var st = t.status[v.status] || t.status.pending;
    setStatus(v.status, st.title, st.text);
    setText("amount", formatAmount(v.amount, v.currency));
    if (isFinal(v.status)) {
      hideDetails();
      stop();
      return;
    }
    var hasAccount = !!v.iban;
    show("details", hasAccount);
    show("no-account", !hasAccount);
    show("countdown-row", true);
    show("simulate-box", v.sandbox && hasAccount);
    tick();
  }

  function invalid() {
    stop();
    hideDetails();
    setText("amount", "");
    show("amount-label", false);
    setStatus("invalid", t.invalidTitle, t.invalidText);
  }

  function request(method, url) {
    return fetch(url, { method: method, headers: { accept: "application/json" }, cache: "no-store", credentials: "same-origin", referrerPolicy: "no-referrer" })
      .then(function (res) {
        return res.json().then(
          function (body) { return { ok: res.ok, status: res.status, body: body }; },
          function () { return { ok: false, status: res.status, body: null }; }
        );
      });
  }

  function schedule(ms) {
    if (stopped) return;
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = setTimeout(poll, ms);
  }

  function pollFailed() {
    failures += 1;
    if (failures === 2) announce(t.connectionLost);
    if (failures >= 2) show("connection", true);
    schedule(Math.min(pollMs * (failures + 1), 15000));
  }

  function poll() {
    if (stopped) return;
    request("GET", data.statusUrl).then(function (res) {
      if (stopped) return;
      if (res.ok && res.body && res.body.success) {
        failures = 0;
        show("connection", false);
        apply(res.body.data);
        schedule(pollMs);
      } else if (res.status === 404) {
        invalid();
      } else {
        pollFailed();
      }
    }, pollFailed);
  }

  function legacyCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }

  function copy(button) {
    var text = button.getAttribute("data-copy") || "";
    var name = button.getAttribute("data-copy-name") || "";
    var label = button.querySelector(".copy-label") || button;
    function done(ok) {
      label.textContent = ok ? t.copied : t.copyFailed;
      announce(fill(ok ? t.copiedAnnouncement : t.copyFailedAnnouncement, { name: name }));
      setTimeout(function () { label.textContent = t.copy; }, 2000);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(legacyCopy(text)); });
    } else {
      done(legacyCopy(text));
    }
  }

  var copyButtons = document.querySelectorAll("button[data-copy]");
  for (var i = 0; i < copyButtons.length; i++) {
    copyButtons[i].addEventListener("click", function (event) { copy(event.currentTarget); });
  }

  var simulateButton = byId("simulate");
  if (simulateButton) {
    simulateButton.addEventListener("click", function () {
      simulateButton.disabled = true;
      simulateButton.textContent = t.simulating;
      show("simulate-error", false);
      function settle(message) {
        simulateButton.disabled = false;
        simulateButton.textContent = t.simulate;
        setText("simulate-error", message);
        show("simulate-error", true);
        schedule(0);
      }
      request("POST", data.simulateUrl).then(function (res) {
        if (res.ok && res.body && res.body.success) {
          apply(res.body.data);
        } else if (res.status === 404) {
          invalid();
        } else {
          var reason = res.body && res.body.error && res.body.error.message;
          settle(t.simulateFailed + (reason ? ": " + reason : ""));
        }
      }, function () { settle(t.simulateFailed); });
    });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") schedule(0);
  });

  syncClock(view);
  if (isFinal(view.status)) {
    stopped = true;
  } else {
    tick();
    tickTimer = setInterval(tick, 500);
    schedule(pollMs);
  }
})();
`;
