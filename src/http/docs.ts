import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type Router } from "express";

const assetsDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const ASSETS = new Set(["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "favicon-16x16.png"]);

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Cairn API reference</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>body { margin: 0 } .topbar { display: none }</style>
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "/openapi.json",
      dom_id: "#reference",
      deepLinking: true,
      persistAuthorization: true,
      displayRequestDuration: true,
      tryItOutEnabled: true,
      validatorUrl: null
    });
  </script>
</body>
</html>
`;

/** `/docs`: an interactive reference over /openapi.json, served from bundled files only (no CDN). */
export function docsRouter(): Router {
  const router = express.Router();
  router.get("/docs", (_request, response) => {
    response.type("html").send(page);
  });
  router.get("/docs/assets/:file", (request, response, next) => {
    const file = request.params.file;
    if (!ASSETS.has(file)) {
      next();
      return;
    }
    response.sendFile(join(assetsDir, file), { maxAge: "1d" });
  });
  return router;
}
