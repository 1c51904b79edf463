// onnxruntime-node 1.16.3 ships without its type declarations; its API is onnxruntime-common's.
declare module "onnxruntime-node" {
  export * from "onnxruntime-common";
}
