// Small progressive enhancements; every page works without this file.
// An error answer (responseError) or no answer at all (sendError: offline, server down): say so in
// the page's language (base.html puts the sentence on <body>), instead of failing silently.
const reportFailure = () => {
  const box = document.getElementById("messages");
  if (!box) return;
  const p = document.createElement("p");
  p.className = "message message-error";
  p.setAttribute("role", "alert");
  p.textContent = document.body.dataset.saveFailed || "The server could not complete that request. Nothing was lost on this page: try again.";
  box.replaceChildren(p);
};
document.addEventListener("htmx:responseError", reportFailure);
document.addEventListener("htmx:sendError", reportFailure);
