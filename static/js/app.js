// Small progressive enhancements; every page works without this file.

// The browser's time zone, for the server to show times in it (BrowserTimeZoneMiddleware); the
// footer says which zone a page used. Set again only when it changed (travel, a new machine).
// IANA names ("Asia/Shanghai") are valid cookie values as they are.
try {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && !document.cookie.split("; ").includes(`tz=${zone}`)) {
    document.cookie = `tz=${zone}; path=/; max-age=31536000; SameSite=Lax`;
  }
} catch (error) {
  // No Intl: times stay in UTC, as the footer says.
}
// The CSRF token as it is now, not as the page was rendered: signing in again (in another tab,
// after a session ended) issues a new one, and every htmx request from the old page, a Retry
// included, would be refused. The cookie is Django's csrftoken (readable: not HttpOnly).
document.addEventListener("htmx:configRequest", (event) => {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith("csrftoken="));
  if (!cookie) return;
  const token = cookie.slice("csrftoken=".length);
  event.detail.headers["x-csrftoken"] = token;
  // A form's own hidden field is read before the header: it must carry the same token.
  if (event.detail.parameters && event.detail.parameters.csrfmiddlewaretoken !== undefined) {
    event.detail.parameters.csrfmiddlewaretoken = token;
  }
});

// An error answer (responseError) or no answer at all (sendError: offline, server down): say so in
// the page's language (base.html puts the sentence on <body>), instead of failing silently.
// A 503 is the database busy with a long write or out of reach (DatabaseBusyMiddleware): nothing
// was saved, and the sentence, the answer's own (its data-refusal), says to wait rather than that
// something failed.
const answerSentence = (xhr) => {
  const refusal = new DOMParser().parseFromString(xhr.responseText || "", "text/html").querySelector("[data-refusal]");
  return refusal ? refusal.textContent.trim() : "";
};
const reportFailure = (event) => {
  const box = document.getElementById("messages");
  if (!box) return;
  const p = document.createElement("p");
  p.className = "message message-error";
  p.setAttribute("role", "alert");
  const busy = event.detail && event.detail.xhr && event.detail.xhr.status === 503;
  p.textContent = (busy && (answerSentence(event.detail.xhr) || document.body.dataset.busy)) || document.body.dataset.saveFailed || "The server could not complete that request. Nothing was lost on this page: try again.";
  box.replaceChildren(p);
};
document.addEventListener("htmx:responseError", reportFailure);
document.addEventListener("htmx:sendError", reportFailure);

// The Content-Security-Policy (annotator/settings.py) runs no inline handler: what a form did in
// its onsubmit is done here.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  // The language switch returns to the address bar's page, not the rendered one: htmx filters and
  // pagers push their own query.
  if ("nextFromAddress" in form.dataset && form.elements.next) {
    form.elements.next.value = location.pathname + location.search + location.hash;
  }
  // A plain form with data-confirm (and no data-confirm-if, below) always asks first.
  if (form.dataset.confirm && !form.dataset.confirmIf && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// A form may ask before it is sent when one choice is made: data-confirm-if="name=value" and the
// question in data-confirm (a meaning-changing criteria version flags every grade of the open sets).
document.addEventListener("htmx:confirm", (event) => {
  const form = event.detail.elt;
  if (!(form instanceof HTMLFormElement) || !form.dataset.confirmIf) return;
  const [name, value] = form.dataset.confirmIf.split("=");
  const chosen = Array.from(form.elements).find((field) => field.name === name && field.checked);
  if (!chosen || chosen.value !== value) return;
  event.preventDefault();
  if (window.confirm(form.dataset.confirm)) event.detail.issueRequest(true);
});

// A form sent with htmx answers in place (its errors) or with a new page (its own messages): the
// messages of the previous submission are out of date either way, and one left standing beside
// the new answer contradicts it.
document.addEventListener("htmx:beforeRequest", (event) => {
  const config = event.detail.requestConfig;
  if (!config || config.verb === "get") return;
  const box = document.getElementById("messages");
  if (box) box.replaceChildren();
});

// Keep the keyboard focus when htmx replaces the element that held it (a pager link, a form sent
// with an error, a filter): otherwise it falls back to <body> and a keyboard or screen-reader user
// loses their place. After the swap it goes, within the new content, to the first invalid field,
// else to the element with the same id, else to the pager link that was used (or the other one),
// else to the first message, else to the new content itself. Pages that move the focus themselves
// (the grading page) carry data-own-focus and are left alone.
// The place is noted when the request starts as well: a submit button disabled during the
// request (hx-disabled-elt) loses the focus before the swap, and the place was lost with it.
let focusAtRequest = null;
let focusBeforeSwap = null;
const focusIn = (target) => {
  const active = document.activeElement;
  return target && active && active !== document.body && target.contains(active)
    ? {
        targetId: target.id,
        id: active.id,
        rel: active.getAttribute("rel"),
        // Controls without an id (filter links, toggle buttons) are found again by what they do,
        // or by data-focus-key: a toggle whose address flips (an id would make htmx settle the
        // old attributes onto the new link, and its next press was a full page load).
        key: active.dataset.focusKey,
        href: active.getAttribute("href"),
        name: active.getAttribute("name"),
        value: active.getAttribute("value"),
      }
    : null;
};
const sameControl = (scope, before) => {
  const css = (value) => (window.CSS && CSS.escape ? CSS.escape(value) : value);
  if (before.key) return scope.querySelector(`[data-focus-key="${css(before.key)}"]`);
  if (before.href) return scope.querySelector(`a[href="${css(before.href)}"]`);
  if (!before.name) return null;
  return (
    (before.value !== null && scope.querySelector(`[name="${css(before.name)}"][value="${css(before.value)}"]`)) ||
    scope.querySelector(`button[name="${css(before.name)}"]`)
  );
};
document.addEventListener("htmx:beforeRequest", (event) => {
  focusAtRequest = focusIn(event.detail.target);
});
document.addEventListener("htmx:beforeSwap", (event) => {
  const lost = !document.activeElement || document.activeElement === document.body;
  focusBeforeSwap = focusIn(event.detail.target) || (lost ? focusAtRequest : null);
  focusAtRequest = null;
});
document.addEventListener("htmx:afterSettle", (event) => {
  const before = focusBeforeSwap;
  focusBeforeSwap = null;
  if (!before || document.querySelector("[data-own-focus]")) return;
  const scope = (before.targetId && document.getElementById(before.targetId)) || event.detail.target;
  if (!scope || !scope.isConnected) return;
  const invalid = scope.querySelector('[aria-invalid="true"]');
  const active = document.activeElement;
  if (active && active !== document.body) {
    // htmx itself puts the focus back on the field with the same id; an invalid field comes first,
    // or the next keys typed land in a field that was fine while the error sits on another.
    if (invalid && scope.contains(active) && !active.matches('[aria-invalid="true"]')) invalid.focus();
    return;
  }
  const next =
    invalid ||
    (before.id && document.getElementById(before.id)) ||
    sameControl(scope, before) ||
    (before.rel && (scope.querySelector(`a[rel="${before.rel}"]`) || scope.querySelector(".pager a"))) ||
    scope.querySelector('[role="alert"], [role="status"], .message, .errorlist');
  const place = next && scope.contains(next) ? next : scope;
  if (!place.matches("a[href], button, input, select, textarea, [tabindex]")) place.setAttribute("tabindex", "-1");
  place.focus();
});

// A filter or a pager replaces a table and the focus stays on the control used: a screen reader
// hears nothing of the result. Say it: what the new content marks with data-announce (the
// what-if banner), else the table's empty state ("No query matches these filters."), else its page
// ("Page 2 of 5"). Form posts say their own result in #messages.
document.addEventListener("htmx:afterSettle", (event) => {
  const live = document.getElementById("live-status");
  const config = event.detail.requestConfig;
  if (!live || !config || config.verb !== "get" || document.querySelector("[data-own-focus]")) return;
  const target = event.detail.target;
  const scope = (target && target.id && document.getElementById(target.id)) || target;
  if (!scope || !scope.isConnected) return;
  const said =
    scope.querySelector("[data-announce]") || scope.querySelector(".empty-state") || scope.querySelector(".pager span");
  // Emptied first, so the same sentence twice in a row (two filters, both empty) is said twice;
  // and when the new table has nothing to say, nothing stale stays.
  live.textContent = "";
  if (said) setTimeout(() => { live.textContent = said.textContent.trim(); }, 50);
});

// A table wider than its box scrolls inside it (phones): keyboard users must be able to scroll it
// too, so it takes the focus while (and only while) it actually overflows (axe:
// scrollable-region-focusable).
const markScrollable = () => {
  document.querySelectorAll(".table").forEach((table) => {
    if (table.scrollWidth > table.clientWidth + 1) table.setAttribute("tabindex", "0");
    else if (table.getAttribute("tabindex") === "0") table.removeAttribute("tabindex");
  });
};
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(markScrollable, 150);
});
document.addEventListener("DOMContentLoaded", markScrollable);
document.addEventListener("htmx:afterSettle", markScrollable);

// A page that comes back with an error (a form sent without htmx, a refused action) puts the
// focus on the field in error, else on the error message: otherwise it starts at the top and
// keyboard and screen-reader users must search for it.
document.addEventListener("DOMContentLoaded", () => {
  if (document.activeElement && document.activeElement !== document.body) return;
  if (document.querySelector("[autofocus]")) return;
  // Else the message that says what the last action did ("Settled: final grade 2."): present at
  // load, a status is not read out, and a screen-reader user would not know it worked.
  const place =
    document.querySelector('main [aria-invalid="true"]') ||
    document.querySelector('#messages .message-error, main .message-error, main .errorlist, main [role="alert"]') ||
    document.querySelector("#messages .message");
  if (!place) return;
  if (!place.matches("a[href], button, input, select, textarea, [tabindex]")) place.setAttribute("tabindex", "-1");
  place.focus();
});
