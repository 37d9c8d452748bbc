package io.bulkhead.okhttp;

import io.bulkhead.httpclient.BodySlot;
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
 * or its source), or read to its end (a read returns -1), or failed while read. BodySlot frees once,
 * whichever comes first, a close racing a read on another thread included (OkHttp allows closing
 * from any thread to abort a body). The source is built once, so every caller of source() reads
 * (and closes) the same wrapper.
 */
final class PermitBody extends ResponseBody {

  private final ResponseBody body;
  private final BufferedSource source;

  PermitBody(ResponseBody body, BodySlot slot) {
    this.body = body;
    this.source =
        Okio.buffer(
            new ForwardingSource(body.source()) {
              @Override
              public long read(Buffer sink, long byteCount) throws IOException {
                return slot.read(() -> super.read(sink, byteCount));
              }

              @Override
              public void close() throws IOException {
                slot.free(super::close);
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
