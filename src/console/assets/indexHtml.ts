/** The console's one page; app.js fills it in. */
export const INDEX_HTML: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-tasks console</title>
<link rel="stylesheet" href="app.css">
<link rel="icon" href="data:,">
</head>
<body>
<header class="top">
  <a class="brand" href="#/">mcp-tasks console</a>
  <nav aria-label="Views"><a href="#/">Tasks</a> · <a href="#/owners" id="nav-owners">Owners</a> · <a href="#/subscriptions" id="nav-subscriptions">Subscriptions</a></nav>
  <span id="role" class="role"></span>
  <span id="live" class="live" aria-live="polite"></span>
</header>
<main id="main" tabindex="-1"></main>
<dialog id="confirm" aria-labelledby="confirm-title">
  <form method="dialog">
    <h2 id="confirm-title">Cancel this task?</h2>
    <p id="confirm-text"></p>
    <div class="actions">
      <button value="back" type="submit" id="confirm-back">Keep it running</button>
      <button value="confirm" type="submit" class="danger" id="confirm-cancel">Cancel task</button>
    </div>
  </form>
</dialog>
<script src="app.js" type="module"></script>
</body>
</html>
`;
