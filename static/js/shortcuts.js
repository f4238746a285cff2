// Single-key shortcuts for one-click decision buttons (the dispute pages): a button carrying
// data-shortcut="k 2" is pressed by "k" or "2". Every such button is a plain submit button, so
// the page works the same without this file.
(() => {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.metaKey || event.ctrlKey) return;
    const target = event.target;
    // Typing a note keeps its letters and digits; a key on the site's menu or footer keeps its
    // meaning too (WCAG 2.1.4): shortcuts act from the page body or the page's main part only.
    if (target.closest && target.closest("textarea, input, select, [contenteditable]")) return;
    const nowhere = target === document.body || target === document.documentElement;
    if (!nowhere && !(target.closest && target.closest("main"))) return;
    const button = Array.from(document.querySelectorAll("[data-shortcuts] button[data-shortcut]")).find(
      (b) => !b.disabled && b.dataset.shortcut.split(" ").includes(event.key),
    );
    if (!button) return;
    event.preventDefault();
    // A click, not form.requestSubmit(button): htmx takes the submitter's name and value from
    // the button last clicked, so the grade would be missing.
    button.click();
  });
})();
