import type { Config } from "../core/config.js";
import type { EmbedderLoader } from "../embed/embedder.js";
import { embedderLoaderFor, loadingNow } from "../embed/models.js";

/**
 * The configured model's loader, its first load already under way. A server calls this before it
 * loads anything else, so the embedding thread loads the model while the main thread loads the
 * rest of the server and opens the store.
 */
export const embedderLoadingNow = (config: Config): EmbedderLoader => loadingNow(embedderLoaderFor(config));
