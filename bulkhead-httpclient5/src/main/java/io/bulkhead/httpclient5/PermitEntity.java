package io.bulkhead.httpclient5;

import io.bulkhead.Permit;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;

/*
 * A classic response's entity that frees its call's slot when the body ends: its stream closed or
 * read to its end (a read returns -1) or failed, writeTo() done, or the entity closed (which
 * CloseableHttpResponse.close() does). Permit.close() is idempotent and thread-safe, so whichever
 * comes first frees the slot and the others do nothing.
 */
final class PermitEntity extends HttpEntityWrapper {

  private final Permit permit;

  PermitEntity(HttpEntity entity, Permit permit) {
    super(entity);
    this.permit = permit;
  }

  @Override
  public InputStream getContent() throws IOException {
    InputStream content;
    try {
      content = super.getContent();
    } catch (IOException | RuntimeException | Error e) {
      permit.close();
      throw e;
    }
    return new FilterInputStream(content) {
      @Override
      public int read() throws IOException {
        return ended(guarded(() -> super.read()));
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return ended(guarded(() -> super.read(b, off, len)));
      }

      @Override
      public void close() throws IOException {
        try {
          super.close();
        } finally {
          permit.close();
        }
      }
    };
  }

  private interface Read {
    int read() throws IOException;
  }

  private int guarded(Read read) throws IOException {
    try {
      return read.read();
    } catch (IOException | RuntimeException | Error e) {
      permit.close();
      throw e;
    }
  }

  private int ended(int read) {
    if (read == -1) {
      permit.close();
    }
    return read;
  }

  @Override
  public void writeTo(OutputStream out) throws IOException {
    try {
      super.writeTo(out);
    } finally {
      permit.close();
    }
  }

  @Override
  public void close() throws IOException {
    try {
      super.close();
    } finally {
      permit.close();
    }
  }
}
