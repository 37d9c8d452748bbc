package io.bulkhead.okhttp;

import io.bulkhead.Permit;
import java.io.IOException;
import okhttp3.MediaType;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;
import org.jspecify.annotations.Nullable;

/*
 * A response body that frees its call's slot when the body ends: closed (by the body, the response,
 * or its source), or read to its end (a read returns -1), or failed while read. Permit.close() is
 * idempotent and thread-safe, so whichever of these comes first frees the slot and the others do
 * nothing; a close racing a read on another thread (OkHttp allows closing from any thread to abort
 * a body) frees it once too. The source is built once, so every caller of source() reads (and
 * closes) the same wrapper.
 */
final class PermitBody extends ResponseBody {

  private final ResponseBody body;
  private final Permit permit;
  private final BufferedSource source;

  PermitBody(ResponseBody body, Permit permit) {
    this.body = body;
    this.permit = permit;
    this.source =
        Okio.buffer(
            new ForwardingSource(body.source()) {
              @Override
              public long read(Buffer sink, long byteCount) throws IOException {
                long read;
                try {
                  read = super.read(sink, byteCount);
                } catch (IOException | RuntimeException | Error e) {
                  permit.close();
                  throw e;
                }
                if (read == -1) {
                  permit.close();
                }
                return read;
              }

              @Override
              public void close() throws IOException {
                try {
                  super.close();
                } finally {
                  permit.close();
                }
              }
            });
  }

  @Override
  public @Nullable MediaType contentType() {
    return body.contentType();
  }

  @Override
  public long contentLength() {
    return body.contentLength();
  }

  @Override
  public BufferedSource source() {
    return source;
  }
}
