-- The sample's own tables, in the application's DataSource (the same SQL on H2, MariaDB/MySQL and PostgreSQL).
CREATE TABLE IF NOT EXISTS sample_job_run (
  group_name   VARCHAR(255) NOT NULL,
  candidate_id VARCHAR(255) NOT NULL,
  term         BIGINT       NOT NULL,
  ran_at       TIMESTAMP(3) NOT NULL
);

-- The highest term that has written, per group: the fence for sample_job_run.
CREATE TABLE IF NOT EXISTS sample_fence (
  group_name VARCHAR(255) NOT NULL PRIMARY KEY,
  max_term   BIGINT       NOT NULL
);
