CREATE TABLE migrated_leases (
  group_name     VARCHAR(255) NOT NULL PRIMARY KEY,
  holder_id      VARCHAR(255),
  term           BIGINT NOT NULL,
  active_from_ms BIGINT NOT NULL,
  lease_until_ms BIGINT NOT NULL
);
