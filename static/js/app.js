// Small progressive enhancements; every page works without this file.
document.addEventListener("htmx:responseError", (event) => {
  const box = document.getElementById("messages");
  if (!box) return;
  const p = document.createElement("p");
  p.className = "message message-error";
  p.setAttribute("role", "alert");
  p.textContent = document.body.dataset.saveFailed || "The server could not complete that request. Nothing was lost on this page: try again.";
  box.replaceChildren(p);
});
