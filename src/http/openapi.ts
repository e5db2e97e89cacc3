// The OpenAPI 3.1 document of /api/v1, generated from the same schemas the routes validate with.
import type { SwaggerOptions } from '@fastify/swagger';

/** Options for @fastify/swagger. */
export function openApiDocument(publicUrl: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Dataset Exchange Service',
        version: '1.0.0',
        description:
          'Installations, access tokens, datasets and record loading. Errors are application/problem+json (RFC 9457).',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          appJwt: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: "The app's own JWT (RS256/ES256)",
          },
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'An installation access token (POST /auth/clientToken)',
          },
        },
      },
    },
  };
}
