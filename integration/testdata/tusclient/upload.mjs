// Uploads one file with tus-js-client, as browsers and the ownCloud clients
// do, for the Go integration tests (integration/tus_test.go).
//
// Usage: node upload.mjs '<json>' where the JSON holds
//   endpoint   the collection URL to POST to (creation)
//   uploadUrl  an upload URL to resume instead of creating one
//   file       the path of the file to send
//   metadata   Upload-Metadata pairs (filename, mtime, checksum, …)
//   headers    extra request headers (Authorization)
//   chunkSize  bytes per PATCH
//   retryDelays  milliseconds between retries; null means no retry
//   uploadDataDuringCreation  send the first chunk in the POST
//
// It reports on stdout, one JSON object a line:
//   {"event":"url","url":…}             the upload URL is known
//   {"event":"chunk","accepted":n,"total":n}   the server acknowledged n bytes
//   {"event":"retry","attempt":n,"error":…}    a failed request is retried
//   {"event":"success","url":…}
//   {"event":"error","url":…,"status":n,"error":…}   and exit status 1
import { readFileSync } from 'node:fs'
import { Upload } from 'tus-js-client'

const opts = JSON.parse(process.argv[2])
const data = readFileSync(opts.file)

function report(event) {
  process.stdout.write(JSON.stringify(event) + '\n')
}

const upload = new Upload(data, {
  endpoint: opts.endpoint,
  uploadUrl: opts.uploadUrl ?? null,
  metadata: opts.metadata ?? {},
  headers: opts.headers ?? {},
  chunkSize: opts.chunkSize ?? Infinity,
  retryDelays: opts.retryDelays ?? null,
  uploadDataDuringCreation: opts.uploadDataDuringCreation ?? false,
  // A resumed upload is named by uploadUrl; nothing is kept between runs.
  storeFingerprintForResuming: false,
  onUploadUrlAvailable() {
    report({ event: 'url', url: upload.url })
  },
  onChunkComplete(_size, accepted, total) {
    report({ event: 'chunk', accepted, total })
  },
  onShouldRetry(err, attempt) {
    const status = err.originalResponse ? err.originalResponse.getStatus() : 0
    const retry = status === 0 || status >= 500 || status === 409 || status === 423
    if (retry) {
      report({ event: 'retry', attempt, status, error: String(err.message ?? err) })
    }
    return retry
  },
  onSuccess() {
    report({ event: 'success', url: upload.url })
  },
  onError(err) {
    const status = err.originalResponse ? err.originalResponse.getStatus() : 0
    report({ event: 'error', url: upload.url, status, error: String(err.message ?? err) })
    process.exitCode = 1
  },
})

upload.start()
