"""The ``/go`` page at the platform's web root: a person approves or denies a shortcode.

Apps using the shortcode grant tell their user "go to <platform>/go and enter CODE" (the
historical ``mixer.com/go``). The page signs in with ``POST /api/v1/users/login``, shows
which client asks for which scopes (``GET /api/v1/oauth/shortcode/code/{code}``), and only
then offers ``POST /api/v1/oauth/shortcode/approve`` or ``.../deny`` with the session's CSRF
token; ``?code=`` fills the code in. No other site may frame it.

The page calls the API by a path relative to its own (``api/v1/...``), so it also works where
a proxy serves the platform under a prefix, as the Jupyter server does on Binder
(``/user/<name>/proxy/8000/go``, :mod:`explorer.core.jupyterhub`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Enter your code</title>
<style>body{font:16px sans-serif;max-width:28em;margin:3em auto}input,button{font:inherit;
margin:.2em 0;padding:.3em}label{display:block}#code{letter-spacing:.3em;text-transform:uppercase}
</style></head><body>
<h1>Connect an app</h1>
<p>Enter the 6-character code the app shows you, and sign in to see what it asks for.</p>
<form id="go">
<label>Code <input id="code" name="code" maxlength="6" required autocomplete="off"></label>
<label>Username <input id="username" name="username" required></label>
<label>Password <input id="password" name="password" type="password" required></label>
<button id="continue">Continue</button>
</form>
<section id="consent" hidden>
<p><strong id="client"></strong> (<span id="website"></span>) asks to:</p>
<ul id="scopes"></ul>
<button id="approve" value="approve">Approve</button>
<button id="deny" value="deny">Deny</button>
</section>
<p id="result" role="status"></p>
<script>
const $ = (id) => document.getElementById(id), form = $("go"), result = $("result");
$("code").value = new URLSearchParams(location.search).get("code") || "";
let csrf = "", code = "";
const call = (method, path, body, headers) => fetch("api/v1" + path, {method,
  credentials: "same-origin", body: body && JSON.stringify(body),
  headers: {"Content-Type": "application/json", ...headers}});
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const login = await call("POST", "/users/login",
    {username: form.username.value, password: form.password.value}, {});
  if (!login.ok) { result.textContent = "Sign-in failed."; return; }
  csrf = login.headers.get("X-CSRF-Token");
  code = form.code.value.trim().toUpperCase();
  const answer = await call("GET", "/oauth/shortcode/code/" + encodeURIComponent(code),
    undefined, {"X-CSRF-Token": csrf});
  const grant = await answer.json();
  if (!answer.ok) { result.textContent = grant.message; return; }
  // Everything the platform names is text: textContent never parses it as HTML.
  $("client").textContent = grant.client.name;
  $("website").textContent = grant.client.website || "no website given";
  $("scopes").replaceChildren(...grant.scopes.map((scope) => {
    const item = document.createElement("li"); item.textContent = scope; return item; }));
  form.hidden = true; $("consent").hidden = false; result.textContent = "";
});
for (const button of [$("approve"), $("deny")]) {
  button.addEventListener("click", async () => {
    const answer = await call("POST", "/oauth/shortcode/" + button.value, {code},
      {"X-CSRF-Token": csrf});
    const body = await answer.json();
    $("consent").hidden = true;
    result.textContent = answer.ok
      ? (button.value === "approve" ? "Approved: you can return to the app." : "Denied.")
      : body.message;
  });
}
</script></body></html>
"""

#: No other site may frame the page (clickjacking the Approve button): both the header old
#: browsers read and the CSP directive that replaced it.
HEADERS = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


async def go(request: Request) -> HTMLResponse:
    """GET /go: the shortcode page."""
    return HTMLResponse(PAGE, headers=HEADERS)


routes = [Route("/go", go, methods=["GET"])]
