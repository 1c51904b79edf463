import { render } from "preact";
import { App } from "./app.js";
import { applyStoredTheme } from "./theme.js";

applyStoredTheme();
const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
