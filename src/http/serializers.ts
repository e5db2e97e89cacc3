// Response serializers, compiled once per distinct schema. Fastify compiles one for every route and
// status it answers with (fast-json-stringify, through @fastify/fast-json-stringify-compiler, its
// default), each time resolving every named component of the API: most routes answer the same
// problem schemas, so a process compiled the same ones hundreds of times at its start
// (docs/architecture.md, "Start-up"). A serializer depends only on its schema and the named
// components, which one factory call fixes: within it, equal schemas share one serializer.
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = SerializerSelector.SerializerFactory;
type Serializer = SerializerSelector.Serializer;

/** Fastify's own serializer factory, with one compiled serializer per distinct schema. */
export function sharedSerializers(build: SerializerFactory = SerializerSelector()): SerializerFactory {
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    const bySchema = new Map<string, Serializer>();
    return (route) => {
      // Equal JSON text, equal serializer (the method, URL and status do not enter it).
      const key = JSON.stringify(route.schema);
      let serializer = bySchema.get(key);
      if (serializer === undefined) {
        serializer = compile(route);
        bySchema.set(key, serializer);
      }
      return serializer;
    };
  };
}
