// Keyboard-first grading (templates/annotator/grading/grade.html). Progressive enhancement:
// without this file every grade button is a plain form post and the page still works.
//
// Keys: 0-3 grade the focused document, j/k move, Enter goes to the next ungraded document,
// r types a reason, u undoes the last grade, ? shows the shortcuts. Single keys are off while
// typing (Esc leaves the reason box; Ctrl+Enter saves there with the chosen grade).
//
// Saving never fails silently: a row whose save did not reach the server keeps the editor's
// choice and reason, says so, retries a few times, and offers a Retry button.
(() => {
  "use strict";
  const root = document.getElementById("grading");
  if (!root) return;

  const RETRY_DELAYS = [1500, 4000];
  // The server waits 20 s for SQLite's lock before it answers 503 (the save's timeout is 25 s, so
  // the answer always arrives and no save lands after the row said it did not).
  const BUSY_RETRY_DELAYS = [5000, 15000, 30000];
  const msg = (name) => root.dataset[name] || "";
  const rows = () => Array.from(root.querySelectorAll("article.candidate"));
  const rowById = (id) => document.getElementById(`cand-${id}`);
  let currentId = null;

  function announce(text) {
    const box = document.getElementById("announcer");
    if (box) box.textContent = text;
  }

  function focusRow(row) {
    if (!row) return;
    rows().forEach((r) => r.classList.toggle("current", r === row));
    currentId = row.dataset.candidate;
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest", behavior: "auto" });
  }

  function currentRow() {
    const active = document.activeElement;
    const inside = active && active.closest ? active.closest("article.candidate") : null;
    return inside || (currentId && rowById(currentId)) || rows()[0] || null;
  }

  function move(step) {
    const all = rows();
    if (!all.length) return;
    const index = all.indexOf(currentRow());
    focusRow(all[Math.min(all.length - 1, Math.max(0, index + step))]);
  }

  const isOpen = (row) => row.dataset.state === "ungraded" || row.dataset.state === "stale" || row.dataset.state === "failed";

  function nextUngraded() {
    const all = rows();
    const start = all.indexOf(currentRow());
    for (let i = 1; i <= all.length; i += 1) {
      const row = all[(start + i) % all.length];
      if (isOpen(row) && row !== all[start]) return focusRow(row);
    }
    if (start >= 0 && isOpen(all[start])) {
      // The document in front of the editor is the only one left: stay on it and say so, rather
      // than announce "every document has your grade" and leave an ungraded row.
      announce(msg("msgLastLeft"));
      focusRow(all[start]);
      return;
    }
    // A query graded page by page goes on to its next page before the next query.
    const nextPage = document.getElementById("next-work-page"); // the next page with work left (server's word)
    announce(msg(nextPage ? "msgAllDoneNextPage" : "msgAllDone"));
    const next = nextPage || document.querySelector("#next-form button");
    if (next) next.focus();
  }

  function setStatus(row, text, retry) {
    const status = row.querySelector(".row-status");
    if (!status) return;
    status.textContent = text;
    if (retry) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "retry";
      button.textContent = msg("msgRetry");
      button.addEventListener("click", () => resend(row));
      status.append(" ", button);
    }
  }

  // A grade chosen while the row's previous save is on its way waits for the answer, and the newest
  // choice wins. htmx would queue it on the row's form, but the answer replaces that form and the
  // queued request goes with it: the second of two quick keys would be dropped without a word.
  const waiting = new Map();
  const press = (row, value) =>
    row.querySelectorAll(".grade-buttons button").forEach((b) => b.setAttribute("aria-pressed", String(b.value === String(value))));
  function wait(row, value) {
    waiting.set(row.dataset.candidate, String(value));
    row.dataset.pending = String(value); // a retry of the save on its way sends the newest choice
    press(row, value);
  }

  // A locked row takes no grade and no reason; its status line says why (the server's words).
  // No space after a full-width colon (Chinese).
  const sayLocked = (row, key) => {
    const lead = msg(key);
    announce(`${lead}${lead.endsWith("：") ? "" : " "}${row.querySelector(".row-status").textContent.trim()}`);
  };
  // After `r` found no reason box, the keys that follow are most likely the reason being typed:
  // single-key shortcuts stay off until the typing pauses, or "ok 2" would move with k and save a 2
  // for another document.
  const TYPING_PAUSE_MS = 1500;
  let shortcutsOffUntil = 0;

  function submitGrade(row, value) {
    const button = row.querySelector(`.grade-buttons button[value="${value}"]`);
    if (!button) {
      sayLocked(row, "msgLocked");
      return;
    }
    if (row.dataset.state === "saving") {
      wait(row, value);
      return;
    }
    row.dataset.pending = String(value);
    row.dataset.retries = "0";
    button.click(); // a real submit with this button as submitter: htmx sends grade=value
  }

  function resend(row) {
    const live = rowById(row.dataset.candidate) || row;
    if (live.dataset.pending === undefined) return;
    setStatus(live, msg("msgRetrying"));
    const button = live.querySelector(`.grade-buttons button[value="${live.dataset.pending}"]`);
    if (button) button.click();
  }

  // Mouse clicks on grade buttons record the pending value too.
  root.addEventListener("click", (event) => {
    const button = event.target.closest(".grade-buttons button");
    if (!button) return;
    const row = button.closest("article.candidate");
    currentId = row.dataset.candidate;
    if (row.dataset.state === "saving") {
      event.preventDefault(); // no second request now: it is sent when the first is answered
      wait(row, button.value);
      return;
    }
    row.dataset.pending = button.value;
    press(row, button.value);
  });

  document.body.addEventListener("htmx:beforeRequest", (event) => {
    const row = event.detail.elt.closest && event.detail.elt.closest("article.candidate");
    if (!row) return;
    row.classList.add("saving");
    row.dataset.state = "saving";
    setStatus(row, msg("msgSaving"));
  });

  // The database-unreachable page (templates/annotator/database_unreachable.html), not the busy one.
  function unreachableAnswer(xhr) {
    const page = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
    return page.querySelector('[data-refusal="unreachable"]') !== null;
  }

  function failed(event) {
    const row = event.detail.elt.closest && event.detail.elt.closest("article.candidate");
    if (!row) return;
    event.stopPropagation(); // the row says it and retries; app.js's page-wide message is not needed
    waiting.delete(row.dataset.candidate); // the retry sends the newest choice (dataset.pending)
    const status = event.type === "htmx:responseError" ? event.detail.xhr.status : 0;
    if (status === 403 || status === 404) {
      // The server answered: the pair left the set, or grading here is no longer allowed. No retry
      // can succeed and nothing is kept to save: not "the server could not be reached", no retry,
      // and no prompt on leaving the page.
      delete row.dataset.pending;
      row.classList.remove("saving");
      row.classList.add("state-failed");
      row.dataset.state = "gone";
      setStatus(row, msg("msgGone"));
      announce(msg("msgGone"));
      return;
    }
    row.classList.remove("saving");
    row.classList.add("state-failed");
    row.dataset.state = "failed";
    const tries = Number(row.dataset.retries || "0");
    // 503: the server answered that the database was busy (an import holds it) or out of reach
    // (restarting) and saved nothing; it is worth waiting for, so it is retried for longer than a
    // network failure.
    const busy = status === 503;
    const unreachable = busy && unreachableAnswer(event.detail.xhr);
    const delays = busy ? BUSY_RETRY_DELAYS : RETRY_DELAYS;
    const text = msg(unreachable ? "msgUnreachable" : busy ? "msgBusy" : "msgFailed");
    setStatus(row, text, true);
    announce(text);
    if (tries < delays.length) {
      row.dataset.retries = String(tries + 1);
      window.setTimeout(() => {
        if (row.isConnected && row.dataset.state === "failed") resend(row);
      }, delays[tries]);
    }
  }
  // Signed out meanwhile: the server answers a save with a full-page redirect to the login page
  // (HX-Redirect) instead of the row. Nothing was saved. The row says so before htmx leaves the
  // page; if the editor chooses to stay (the leave prompt), it is not left "saving" forever.
  document.body.addEventListener("htmx:beforeOnLoad", (event) => {
    const row = event.detail.elt.closest && event.detail.elt.closest("article.candidate");
    if (!row || !event.detail.xhr.getResponseHeader("HX-Redirect")) return;
    waiting.delete(row.dataset.candidate);
    row.classList.remove("saving");
    row.classList.add("state-failed");
    row.dataset.state = "failed";
    setStatus(row, msg("msgSignedOut"), true);
    announce(msg("msgSignedOut"));
  });
  document.body.addEventListener("htmx:responseError", failed);
  document.body.addEventListener("htmx:sendError", failed);
  document.body.addEventListener("htmx:timeout", failed);
  window.addEventListener("online", () => rows().filter((r) => r.dataset.state === "failed").forEach(resend));

  // The server answers every save or undo with the row; put the focus back where it was.
  document.body.addEventListener("grade-row", (event) => {
    const row = rowById(event.detail.candidate);
    if (!row) return;
    const next = waiting.get(String(event.detail.candidate));
    if (next !== undefined) {
      waiting.delete(String(event.detail.candidate));
      // Locked by now (the first grade completed the pair): submitGrade says so.
      if (next !== row.dataset.grade) submitGrade(row, next);
    }
    const lost = !document.activeElement || document.activeElement === document.body;
    if (event.detail.undone || (lost && String(event.detail.candidate) === String(currentId))) focusRow(row);
    else if (lost && currentId) focusRow(rowById(currentId));
  });

  // A reason typed but not saved yet (it is saved with a grade, or by Ctrl+Enter) is lost too.
  const unsavedReason = (r) => {
    const box = r.querySelector("textarea.reason:not([readonly])");
    return box !== null && box.value !== box.defaultValue;
  };
  window.addEventListener("beforeunload", (event) => {
    if (rows().some((r) => r.dataset.state === "saving" || r.dataset.state === "failed" || unsavedReason(r))) {
      event.preventDefault();
      event.returnValue = msg("msgUnsaved");
    }
  });

  const dialog = document.getElementById("shortcuts-dialog");
  const showShortcuts = () => dialog && !dialog.open && dialog.showModal();
  const opener = document.getElementById("shortcuts-open");
  if (opener) opener.addEventListener("click", showShortcuts);

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.metaKey) return;
    if (dialog && dialog.open) return; // the dialog handles Esc itself
    const target = event.target;
    const typing = target.closest && target.closest("textarea, input, select, [contenteditable]");
    if (typing) {
      const row = target.closest("article.candidate");
      if (!row) return;
      if (event.key === "Enter" && event.ctrlKey) {
        event.preventDefault();
        const chosen = row.dataset.pending ?? row.dataset.grade;
        if (chosen === undefined || chosen === "") announce(msg("msgChoose"));
        else submitGrade(row, chosen);
      } else if (event.key === "Escape") {
        event.preventDefault();
        focusRow(row);
      }
      return;
    }
    if (event.ctrlKey) return;
    // Single keys act only on the grading area: a key pressed on the site's menu, the language
    // button or the footer keeps its meaning: a grade saved from there could complete the pair
    // and lock it (WCAG 2.1.4).
    const nowhere = target === document.body || target === document.documentElement;
    if (!nowhere && !root.contains(target)) return;
    if (event.key.length === 1 && event.timeStamp < shortcutsOffUntil) {
      shortcutsOffUntil = event.timeStamp + TYPING_PAUSE_MS;
      event.preventDefault();
      return;
    }
    const onControl = target.closest && target.closest("button, a, summary");
    switch (event.key) {
      case "0":
      case "1":
      case "2":
      case "3": {
        // A grade goes to the document the focus is on (or the current one when the focus is
        // nowhere), never to a remembered one from the criteria panel or the Next button.
        const row = nowhere ? currentRow() : target.closest("article.candidate");
        if (!row) {
          announce(msg("msgFocusDocument")); // on Undo, Next or the shortcuts: say why nothing happened
          return;
        }
        event.preventDefault();
        submitGrade(row, event.key);
        break;
      }
      case "j":
        event.preventDefault();
        move(1);
        break;
      case "k":
        event.preventDefault();
        move(-1);
        break;
      case "Enter":
        if (onControl) return; // Enter on a button or link keeps its usual meaning
        event.preventDefault();
        nextUngraded();
        break;
      case "r": {
        const row = currentRow();
        if (!row) return;
        event.preventDefault();
        const box = row.querySelector("textarea.reason");
        if (box) {
          box.focus(); // a locked row's read-only box holds a reason typed before it locked
        } else {
          sayLocked(row, "msgNoReason");
          shortcutsOffUntil = event.timeStamp + TYPING_PAUSE_MS;
        }
        break;
      }
      case "u": {
        const undo = document.getElementById("undo-form");
        if (!undo) return;
        event.preventDefault();
        undo.requestSubmit();
        break;
      }
      case "?":
        event.preventDefault();
        showShortcuts();
        break;
      default:
    }
  });

  // Start where the work is: the row named in the URL, else the first one still to grade.
  const fromHash = window.location.hash.startsWith("#cand-") ? document.querySelector(window.location.hash) : null;
  focusRow(fromHash || rows().find(isOpen) || rows()[0]);
})();
