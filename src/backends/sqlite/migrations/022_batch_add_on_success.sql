-- A batch's onSuccess callback and the members added to the open batch (issue 29; the same repair
-- as PostgreSQL's migration 035, read its comment): `batch.add` wrote the edges from onSuccess to
-- the new members with `ignore` instead of `cancel`, so onSuccess ran though an added member ended
-- dead-lettered or cancelled. The edges not ended yet get the policy they should have had.
UPDATE soniq_job_deps SET on_failure = 'cancel'
WHERE on_failure = 'ignore' AND dep_state IS NULL
  AND EXISTS (SELECT 1 FROM soniq_flow_nodes AS cb
              WHERE cb.job_id = soniq_job_deps.job_id AND cb.role = 'on_success')
  AND EXISTS (SELECT 1 FROM soniq_flow_nodes AS m
              WHERE m.job_id = soniq_job_deps.dep_id AND m.role = 'member');
