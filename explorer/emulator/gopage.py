"""The ``/go`` page at the platform's web root: a person approves or denies a shortcode.

Apps using the shortcode grant tell their user "go to <platform>/go and enter CODE" (the
historical ``mixer.com/go``). The page signs in with ``POST /api/v1/users/login`` and then
calls ``POST /api/v1/oauth/shortcode/approve`` or ``.../deny`` with the session's CSRF token;
``?code=`` fills the code in.
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
<p>Enter the 6-character code the app shows you, and sign in to approve it.</p>
<form id="go">
<label>Code <input id="code" name="code" maxlength="6" required autocomplete="off"></label>
<label>Username <input id="username" name="username" required></label>
<label>Password <input id="password" name="password" type="password" required></label>
<button name="decision" value="approve">Approve</button>
<button name="decision" value="deny">Deny</button>
</form>
<p id="result" role="status"></p>
<script>
const form = document.getElementById("go"), result = document.getElementById("result");
document.getElementById("code").value = new URLSearchParams(location.search).get("code") || "";
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const decision = event.submitter ? event.submitter.value : "approve";
  const post = (path, body, headers) => fetch("/api/v1" + path, {method: "POST",
    credentials: "same-origin", body: JSON.stringify(body),
    headers: {"Content-Type": "application/json", ...headers}});
  const login = await post("/users/login",
    {username: form.username.value, password: form.password.value}, {});
  if (!login.ok) { result.textContent = "Sign-in failed."; return; }
  const csrf = login.headers.get("X-CSRF-Token");
  const answer = await post("/oauth/shortcode/" + decision, {code: form.code.value},
    {"X-CSRF-Token": csrf});
  const body = await answer.json();
  result.textContent = answer.ok
    ? (decision === "approve" ? "Approved: you can return to the app." : "Denied.")
    : body.message;
});
</script></body></html>
"""


async def go(request: Request) -> HTMLResponse:
    """GET /go: the shortcode page."""
    return HTMLResponse(PAGE)


routes = [Route("/go", go, methods=["GET"])]
