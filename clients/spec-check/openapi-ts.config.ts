import { defineConfig } from "@hey-api/openapi-ts";

export default defineConfig({
  input: "../../openapi/openapi.json",
  output: "generated/hey-api",
  plugins: ["@hey-api/client-fetch"],
});
