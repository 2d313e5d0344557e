// A Node server on @grpc/grpc-js with @grpc/reflection (npm, pinned by scripts/install-tools.sh
// `interop`), serving tests/interop/notes.proto. Nothing of this project runs in it.
// Prints `listening on 127.0.0.1:PORT` once it serves.
//
// Usage: node tests/interop/grpc_js_server.mjs [PORT]
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "..", ".tools/grpc-js/package.json"));
const grpc = require("@grpc/grpc-js");
const loader = require("@grpc/proto-loader");
const { ReflectionService } = require("@grpc/reflection");

const definition = loader.loadSync(path.join(here, "notes.proto"), {
  keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
});
const proto = grpc.loadPackageDefinition(definition).interop.notes.v1;
const notes = new Map();

const server = new grpc.Server();
server.addService(proto.Notes.service, {
  Put(call, callback) {
    const note = call.request;
    if (!note.id) {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: "a note needs an id" });
      return;
    }
    const previous = notes.get(note.id);
    const stored = { ...note, version: String(previous ? BigInt(previous.version) + 1n : 1n) };
    notes.set(note.id, stored);
    callback(null, stored);
  },
  Get(call, callback) {
    const note = notes.get(call.request.id);
    if (!note) {
      callback({ code: grpc.status.NOT_FOUND, details: `no note with id ${call.request.id}` });
      return;
    }
    callback(null, note);
  },
  List(call) {
    const all = [...notes.values()];
    for (const note of all) call.write(note);
    let left = call.request.repeat;
    if (!left || !all.length) {
      call.end();
      return;
    }
    const timer = setInterval(() => {
      if (call.cancelled || left-- <= 0) {
        clearInterval(timer);
        if (!call.cancelled) call.end();
        return;
      }
      call.write(all[all.length - 1]);
    }, 100);
    call.on("cancelled", () => clearInterval(timer));
  },
});
new ReflectionService(definition).addToServer(server);
server.bindAsync(`127.0.0.1:${process.argv[2] ?? 0}`, grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) {
    console.error(error);
    process.exit(1);
  }
  console.log(`listening on 127.0.0.1:${port}`);
});
