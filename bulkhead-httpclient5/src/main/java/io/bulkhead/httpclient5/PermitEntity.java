package io.bulkhead.httpclient5;

import io.bulkhead.httpclient.BodySlot;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;

/*
 * A classic response's entity that frees its call's slot when the body ends: its stream read to its
 * end (a read returns -1) or failed or closed, writeTo() done, or the entity closed (which the
 * response's close() does). BodySlot frees once, whichever comes first.
 */
final class PermitEntity extends HttpEntityWrapper {

  private final BodySlot slot;

  PermitEntity(HttpEntity entity, BodySlot slot) {
    super(entity);
    this.slot = slot;
  }

  @Override
  public InputStream getContent() throws IOException {
    InputStream content;
    try {
      content = super.getContent();
    } catch (IOException | RuntimeException | Error e) {
      slot.free();
      throw e;
    }
    return new FilterInputStream(content) {
      @Override
      public int read() throws IOException {
        return (int) slot.read(() -> super.read());
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return (int) slot.read(() -> super.read(b, off, len));
      }

      @Override
      public void close() throws IOException {
        slot.free(super::close);
      }
    };
  }

  @Override
  public void writeTo(OutputStream out) throws IOException {
    slot.free(() -> super.writeTo(out));
  }

  @Override
  public void close() throws IOException {
    slot.free(super::close);
  }
}
