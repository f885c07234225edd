/* The API reference page: Swagger UI (served from static/vendor) draws the OpenAPI document whose
 * URL is in #api-docs[data-document-url]. "Try it out" from a signed-in browser sends the page's
 * CSRF token, as the API asks of cookie sign-ins. */
(function () {
  'use strict';
  const container = document.getElementById('api-docs');
  if (!container) return;
  if (typeof SwaggerUIBundle === 'undefined') {
    container.textContent = 'The reference could not be drawn: its front-end files are missing on the server.';
    return;
  }
  const headers = document.body.getAttribute('hx-headers:inherited');
  const csrf = headers ? JSON.parse(headers)['X-CSRFToken'] : null;
  SwaggerUIBundle({
    url: container.dataset.documentUrl,
    domNode: container,
    deepLinking: false,
    validatorUrl: null,
    requestInterceptor: (request) => {
      if (csrf) request.headers['X-CSRFToken'] = csrf;
      return request;
    },
  });
})();
