// Vitest setup file: every test file removes the temporary directories it made (tempDir()).
import { afterAll } from "vitest";
import { removeTempDirs } from "./temp.js";

afterAll(() => {
  removeTempDirs();
});
