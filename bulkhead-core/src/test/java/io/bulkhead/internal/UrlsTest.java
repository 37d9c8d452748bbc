package io.bulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UrlsTest {

  @Test
  void masked_hidesTheUserAndThePasswordOfTheUserinfo() {
    assertThat(Urls.masked("ftp://svc:s3cret@llm.internal/v1"))
        .isEqualTo("ftp://***@llm.internal/v1");
    assertThat(Urls.masked("redis://:s3cret@127.0.0.1:6379/0"))
        .isEqualTo("redis://***@127.0.0.1:6379/0");
    assertThat(Urls.masked("jdbc:mysql://app:s3cret@db:3306/orders"))
        .isEqualTo("jdbc:mysql://***@db:3306/orders");
    assertThat(Urls.masked("svc:s3cret@llm.internal/v1"))
        .as("a host without a scheme")
        .isEqualTo("***@llm.internal/v1");
    assertThat(Urls.masked("jdbc:oracle:thin:scott/tiger@db:1521:orcl"))
        .isEqualTo("jdbc:oracle:thin:***@db:1521:orcl");
    assertThat(Urls.masked("jdbc:oracle:thin:@//db:1521/orders"))
        .as("no userinfo: nothing to hide")
        .isEqualTo("jdbc:oracle:thin:@//db:1521/orders");
    assertThat(Urls.masked("//svc:s3cret@llm.internal")).isEqualTo("//***@llm.internal");
  }

  @Test
  void masked_coversAPasswordWithARawAtSign_butNotAnAtSignInThePathOrQuery() {
    assertThat(Urls.masked("https://svc:p@ss@host/v1?to=a@b.example"))
        .isEqualTo("https://***@host/v1?to=a@b.example");
    assertThat(Urls.masked("https://host/users/a@b")).isEqualTo("https://host/users/a@b");
    assertThat(Urls.masked("svc:p@ss@llm.internal")).isEqualTo("***@llm.internal");
  }

  @Test
  void masked_hidesPasswordParameters() {
    assertThat(Urls.masked("jdbc:postgresql://db/orders?user=app&password=s3cret&ssl=true"))
        .isEqualTo("jdbc:postgresql://db/orders?user=app&password=***&ssl=true");
    assertThat(Urls.masked("jdbc:sqlserver://db;user=app;Password=s3cret;encrypt=true"))
        .isEqualTo("jdbc:sqlserver://db;user=app;Password=***;encrypt=true");
    assertThat(Urls.masked("odbc://db?PWD=s3cret")).isEqualTo("odbc://db?PWD=***");
  }

  @Test
  void masked_keepsOneLine_andLeavesOtherTextAlone() {
    assertThat(Urls.masked("redis://host\n:6379")).isEqualTo("redis://host :6379");
    assertThat(Urls.masked("https://llm.internal:8443/v1"))
        .isEqualTo("https://llm.internal:8443/v1");
    assertThat(Urls.masked("")).isEmpty();
  }
}
