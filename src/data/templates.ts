// The 12 builtin company templates of the setup wizard, their schema and the TemplateInfo projection.
import { z } from 'zod';
import { AgentLevel, AutonomyLevel, ModelTier, PersonalityPresetName, TemplateName, type TemplateInfo } from '../contracts/catalogue.ts';

const Identifier = z.string().regex(/^[a-z][a-z0-9_]*$/).max(64);

export const TemplateAgent = z.strictObject({
  role: z.string().min(1).max(100),
  department: Identifier,
  level: AgentLevel,
  personality_preset: PersonalityPresetName,
  tier: ModelTier,
});
export type TemplateAgent = z.infer<typeof TemplateAgent>;

export const CompanyTemplate = z
  .strictObject({
    name: TemplateName,
    display_name: z.string().min(1).max(100),
    description: z.string().min(1).max(1000),
    tags: z.array(z.string().min(1).max(40)).min(1),
    autonomy_level: AutonomyLevel,
    /** Short identifier of the work-management flow the company starts with. */
    workflow: Identifier,
    departments: z.array(Identifier).min(1),
    agents: z.array(TemplateAgent).min(1).max(100),
  })
  .superRefine((template, ctx) => {
    const departments = new Set<string>();
    template.departments.forEach((department, i) => {
      if (departments.has(department)) {
        ctx.addIssue({ code: 'custom', path: ['departments', i], message: `duplicate department ${department}` });
      }
      departments.add(department);
    });
    template.agents.forEach((agent, i) => {
      if (!departments.has(agent.department)) {
        ctx.addIssue({
          code: 'custom',
          path: ['agents', i, 'department'],
          message: `department ${agent.department} is not one of the template's departments`,
        });
      }
    });
  });
export type CompanyTemplate = z.infer<typeof CompanyTemplate>;


const BUILTIN_TEMPLATES: readonly CompanyTemplate[] = [
  {
    name: 'agency',
    display_name: 'Digital Agency',
    description:
      'A client-services studio that designs and builds websites and campaigns. Account managers own the ' +
      'client relationship, a creative director sets the look, and a small web team delivers. Work is ' +
      'supervised because most output goes straight to clients.',
    tags: ['client-work', 'design', 'web', 'services'],
    autonomy_level: 'supervised',
    workflow: 'kanban',
    departments: ['sales', 'design', 'engineering', 'marketing', 'operations'],
    agents: [
      { role: 'Account Director', department: 'sales', level: 'director', personality_preset: 'client_advisor', tier: 'large' },
      { role: 'Account Manager', department: 'sales', level: 'mid', personality_preset: 'client_advisor', tier: 'medium' },
      { role: 'Creative Director', department: 'design', level: 'director', personality_preset: 'creative_innovator', tier: 'large' },
      { role: 'UI Designer', department: 'design', level: 'mid', personality_preset: 'creative_innovator', tier: 'medium' },
      { role: 'UX Researcher', department: 'design', level: 'mid', personality_preset: 'user_advocate', tier: 'medium' },
      { role: 'Technical Lead', department: 'engineering', level: 'lead', personality_preset: 'pragmatic_builder', tier: 'large' },
      { role: 'Web Developer', department: 'engineering', level: 'mid', personality_preset: 'rapid_prototyper', tier: 'medium' },
      { role: 'Junior Web Developer', department: 'engineering', level: 'junior', personality_preset: 'eager_learner', tier: 'small' },
      { role: 'Content Strategist', department: 'marketing', level: 'senior', personality_preset: 'communication_bridge', tier: 'medium' },
      { role: 'Project Manager', department: 'operations', level: 'senior', personality_preset: 'disciplined_executor', tier: 'medium' },
    ],
  },
  {
    name: 'consultancy',
    display_name: 'Consultancy',
    description:
      'A small advisory firm that researches a client problem, analyses the data and delivers ' +
      'recommendations with an implementation plan. Partners review every deliverable before it leaves ' +
      'the building; engagements move through stage gates.',
    tags: ['advisory', 'analysis', 'client-work', 'strategy'],
    autonomy_level: 'supervised',
    workflow: 'stage_gate',
    departments: ['executive', 'operations', 'research', 'data', 'engineering', 'sales'],
    agents: [
      { role: 'Managing Partner', department: 'executive', level: 'c_suite', personality_preset: 'strategic_planner', tier: 'large' },
      { role: 'Engagement Manager', department: 'operations', level: 'lead', personality_preset: 'client_advisor', tier: 'large' },
      { role: 'Senior Consultant', department: 'research', level: 'senior', personality_preset: 'methodical_analyst', tier: 'large' },
      { role: 'Consultant', department: 'research', level: 'mid', personality_preset: 'independent_researcher', tier: 'medium' },
      { role: 'Business Analyst', department: 'data', level: 'mid', personality_preset: 'data_driven_optimizer', tier: 'medium' },
      { role: 'Solutions Architect', department: 'engineering', level: 'principal', personality_preset: 'systems_thinker', tier: 'large' },
      { role: 'Proposal Writer', department: 'sales', level: 'mid', personality_preset: 'technical_communicator', tier: 'small' },
    ],
  },
  {
    name: 'data_team',
    display_name: 'Data Team',
    description:
      'An analytics and data-platform team: engineers build and run the pipelines, analysts and ' +
      'scientists turn the warehouse into dashboards, forecasts and models, and a governance analyst ' +
      'keeps access and privacy in check.',
    tags: ['analytics', 'data-engineering', 'machine-learning'],
    autonomy_level: 'semi',
    workflow: 'kanban',
    departments: ['data', 'research', 'engineering', 'security'],
    agents: [
      { role: 'Head of Data', department: 'data', level: 'director', personality_preset: 'strategic_planner', tier: 'large' },
      { role: 'Senior Data Engineer', department: 'data', level: 'senior', personality_preset: 'disciplined_executor', tier: 'large' },
      { role: 'Data Engineer', department: 'data', level: 'mid', personality_preset: 'pragmatic_builder', tier: 'medium' },
      { role: 'Analytics Engineer', department: 'data', level: 'mid', personality_preset: 'methodical_analyst', tier: 'medium' },
      { role: 'Data Analyst', department: 'data', level: 'junior', personality_preset: 'eager_learner', tier: 'small' },
      { role: 'Data Scientist', department: 'research', level: 'senior', personality_preset: 'independent_researcher', tier: 'large' },
      { role: 'Machine Learning Engineer', department: 'engineering', level: 'senior', personality_preset: 'code_craftsman', tier: 'large' },
      { role: 'Data Governance Analyst', department: 'security', level: 'mid', personality_preset: 'security_sentinel', tier: 'medium' },
    ],
  },
  {
    name: 'dev_shop',
    display_name: 'Development Shop',
    description:
      'A software delivery team that builds and maintains products end to end: backend, frontend and ' +
      'mobile engineers, QA and a DevOps engineer, organised in sprints under an engineering lead.',
    tags: ['software', 'delivery', 'engineering'],
    autonomy_level: 'semi',
    workflow: 'scrum',
    departments: ['engineering', 'operations', 'product'],
    agents: [
      { role: 'Engineering Lead', department: 'engineering', level: 'lead', personality_preset: 'systems_thinker', tier: 'large' },
      { role: 'Senior Backend Engineer', department: 'engineering', level: 'senior', personality_preset: 'code_craftsman', tier: 'large' },
      { role: 'Backend Engineer', department: 'engineering', level: 'mid', personality_preset: 'disciplined_executor', tier: 'medium' },
      { role: 'Frontend Engineer', department: 'engineering', level: 'mid', personality_preset: 'pragmatic_builder', tier: 'medium' },
      { role: 'Mobile Engineer', department: 'engineering', level: 'mid', personality_preset: 'rapid_prototyper', tier: 'medium' },
      { role: 'QA Engineer', department: 'engineering', level: 'mid', personality_preset: 'quality_guardian', tier: 'medium' },
      { role: 'Technical Writer', department: 'engineering', level: 'junior', personality_preset: 'technical_communicator', tier: 'small' },
      { role: 'DevOps Engineer', department: 'operations', level: 'senior', personality_preset: 'process_optimizer', tier: 'medium' },
      { role: 'Delivery Manager', department: 'product', level: 'mid', personality_preset: 'disciplined_executor', tier: 'small' },
    ],
  },
  {
    name: 'full_company',
    display_name: 'Full Company',
    description:
      'A complete organisation with an executive team and every core function: engineering, product, ' +
      'design, marketing, sales, support, security, operations, finance and data. Start here to see ' +
      'how the departments work together, then trim what you do not need.',
    tags: ['enterprise', 'cross-functional', 'complete'],
    autonomy_level: 'semi',
    workflow: 'agile_kanban',
    departments: [
      'executive',
      'engineering',
      'product',
      'design',
      'marketing',
      'sales',
      'support',
      'security',
      'operations',
      'finance',
      'data',
    ],
    agents: [
      { role: 'Chief Operating Officer', department: 'executive', level: 'c_suite', personality_preset: 'visionary_leader', tier: 'large' },
      { role: 'Chief Technology Officer', department: 'executive', level: 'c_suite', personality_preset: 'systems_thinker', tier: 'large' },
      { role: 'VP of Engineering', department: 'engineering', level: 'vp', personality_preset: 'strategic_planner', tier: 'large' },
      { role: 'Staff Engineer', department: 'engineering', level: 'principal', personality_preset: 'code_craftsman', tier: 'large' },
      { role: 'Senior Backend Engineer', department: 'engineering', level: 'senior', personality_preset: 'code_craftsman', tier: 'large' },
      { role: 'Backend Engineer', department: 'engineering', level: 'mid', personality_preset: 'disciplined_executor', tier: 'medium' },
      { role: 'Frontend Engineer', department: 'engineering', level: 'mid', personality_preset: 'pragmatic_builder', tier: 'medium' },
      { role: 'QA Engineer', department: 'engineering', level: 'mid', personality_preset: 'quality_guardian', tier: 'medium' },
      { role: 'Head of Product', department: 'product', level: 'director', personality_preset: 'strategic_planner', tier: 'large' },
      { role: 'Product Manager', department: 'product', level: 'senior', personality_preset: 'user_advocate', tier: 'medium' },
      { role: 'Product Designer', department: 'design', level: 'senior', personality_preset: 'creative_innovator', tier: 'medium' },
      { role: 'Marketing Lead', department: 'marketing', level: 'lead', personality_preset: 'growth_hacker', tier: 'medium' },
      { role: 'Content Marketer', department: 'marketing', level: 'mid', personality_preset: 'communication_bridge', tier: 'small' },
      { role: 'Sales Lead', department: 'sales', level: 'lead', personality_preset: 'client_advisor', tier: 'medium' },
      { role: 'Customer Support Specialist', department: 'support', level: 'mid', personality_preset: 'empathetic_mentor', tier: 'small' },
      { role: 'Security Engineer', department: 'security', level: 'senior', personality_preset: 'security_sentinel', tier: 'large' },
      { role: 'Site Reliability Engineer', department: 'operations', level: 'senior', personality_preset: 'process_optimizer', tier: 'medium' },
      { role: 'Financial Analyst', department: 'finance', level: 'mid', personality_preset: 'data_driven_optimizer', tier: 'small' },
      { role: 'Data Analyst', department: 'data', level: 'mid', personality_preset: 'methodical_analyst', tier: 'small' },
    ],
  },
  {
    name: 'growth_marketing',
    display_name: 'Growth Marketing',
    description:
      'A growth team that runs acquisition and retention experiments: paid and organic channels, content ' +
      'and lifecycle messaging, with an analyst measuring what actually moves signups and revenue.',
    tags: ['marketing', 'growth', 'experimentation', 'content'],
    autonomy_level: 'semi',
    workflow: 'kanban',
    departments: ['marketing', 'data', 'design'],
    agents: [
      { role: 'Head of Growth', department: 'marketing', level: 'director', personality_preset: 'growth_hacker', tier: 'large' },
      { role: 'Performance Marketer', department: 'marketing', level: 'senior', personality_preset: 'data_driven_optimizer', tier: 'medium' },
      { role: 'Content Strategist', department: 'marketing', level: 'mid', personality_preset: 'communication_bridge', tier: 'medium' },
      { role: 'Copywriter', department: 'marketing', level: 'mid', personality_preset: 'creative_innovator', tier: 'medium' },
      { role: 'SEO Specialist', department: 'marketing', level: 'mid', personality_preset: 'methodical_analyst', tier: 'small' },
      { role: 'Marketing Analyst', department: 'data', level: 'mid', personality_preset: 'data_driven_optimizer', tier: 'medium' },
      { role: 'Brand Designer', department: 'design', level: 'mid', personality_preset: 'creative_innovator', tier: 'medium' },
    ],
  },
  {
    name: 'product_team',
    display_name: 'Product Team',
    description:
      'A cross-functional product squad that discovers, designs and ships features: product lead and ' +
      'manager, design and research, and an engineering pod with its own QA, working in sprints.',
    tags: ['product', 'design', 'engineering', 'discovery'],
    autonomy_level: 'semi',
    workflow: 'scrum',
    departments: ['product', 'design', 'research', 'engineering'],
    agents: [
      { role: 'Product Lead', department: 'product', level: 'lead', personality_preset: 'visionary_leader', tier: 'large' },
      { role: 'Product Manager', department: 'product', level: 'senior', personality_preset: 'user_advocate', tier: 'medium' },
      { role: 'UX Designer', department: 'design', level: 'senior', personality_preset: 'user_advocate', tier: 'medium' },
      { role: 'UX Researcher', department: 'research', level: 'mid', personality_preset: 'independent_researcher', tier: 'medium' },
      { role: 'Technical Lead', department: 'engineering', level: 'lead', personality_preset: 'systems_thinker', tier: 'large' },
      { role: 'Senior Full-Stack Engineer', department: 'engineering', level: 'senior', personality_preset: 'pragmatic_builder', tier: 'large' },
      { role: 'Full-Stack Engineer', department: 'engineering', level: 'mid', personality_preset: 'rapid_prototyper', tier: 'medium' },
      { role: 'QA Engineer', department: 'engineering', level: 'mid', personality_preset: 'quality_guardian', tier: 'medium' },
    ],
  },
  {
    name: 'research_lab',
    display_name: 'Research Lab',
    description:
      'An exploratory research group that reads the literature, forms hypotheses, runs experiments and ' +
      'writes up results. Agents work with full autonomy because the work stays inside the lab.',
    tags: ['research', 'experimentation', 'science'],
    autonomy_level: 'full',
    workflow: 'kanban',
    departments: ['research', 'engineering', 'data'],
    agents: [
      { role: 'Research Director', department: 'research', level: 'director', personality_preset: 'visionary_leader', tier: 'large' },
      { role: 'Principal Scientist', department: 'research', level: 'principal', personality_preset: 'independent_researcher', tier: 'large' },
      { role: 'Research Scientist', department: 'research', level: 'senior', personality_preset: 'methodical_analyst', tier: 'large' },
      { role: 'Research Assistant', department: 'research', level: 'junior', personality_preset: 'eager_learner', tier: 'small' },
      { role: 'Science Writer', department: 'research', level: 'mid', personality_preset: 'technical_communicator', tier: 'medium' },
      { role: 'Research Engineer', department: 'engineering', level: 'senior', personality_preset: 'code_craftsman', tier: 'large' },
      { role: 'Data Scientist', department: 'data', level: 'mid', personality_preset: 'data_driven_optimizer', tier: 'medium' },
    ],
  },
  {
    name: 'security_team',
    display_name: 'Security Team',
    description:
      'An in-house security function: architecture review, application security, offensive testing, ' +
      'incident response and compliance. Every action is supervised because findings touch production ' +
      'systems and sensitive data.',
    tags: ['security', 'compliance', 'incident-response'],
    autonomy_level: 'supervised',
    workflow: 'event_driven',
    departments: ['security', 'operations'],
    agents: [
      { role: 'Head of Security', department: 'security', level: 'director', personality_preset: 'security_sentinel', tier: 'large' },
      { role: 'Security Architect', department: 'security', level: 'principal', personality_preset: 'systems_thinker', tier: 'large' },
      { role: 'Application Security Engineer', department: 'security', level: 'senior', personality_preset: 'security_sentinel', tier: 'large' },
      { role: 'Penetration Tester', department: 'security', level: 'senior', personality_preset: 'devil_advocate', tier: 'large' },
      { role: 'Compliance Analyst', department: 'security', level: 'mid', personality_preset: 'methodical_analyst', tier: 'medium' },
      { role: 'Incident Responder', department: 'operations', level: 'mid', personality_preset: 'disciplined_executor', tier: 'medium' },
    ],
  },
  {
    name: 'solo_founder',
    display_name: 'Solo Founder',
    description:
      'The smallest useful company: one engineer who builds the product and one generalist who handles ' +
      'launch and growth, while you make the calls. Cheap to run and easy to grow later.',
    tags: ['minimal', 'bootstrap', 'small'],
    autonomy_level: 'semi',
    workflow: 'kanban',
    departments: ['engineering', 'marketing'],
    agents: [
      { role: 'Full-Stack Engineer', department: 'engineering', level: 'senior', personality_preset: 'pragmatic_builder', tier: 'large' },
      { role: 'Growth Generalist', department: 'marketing', level: 'mid', personality_preset: 'growth_hacker', tier: 'small' },
    ],
  },
  {
    name: 'startup',
    display_name: 'Startup',
    description:
      'An early-stage startup looking for product-market fit: a CTO, a product manager, two engineers, a ' +
      'designer and a growth marketer who ship fast and learn from users every week.',
    tags: ['startup', 'mvp', 'product', 'lean'],
    autonomy_level: 'semi',
    workflow: 'agile_kanban',
    departments: ['executive', 'product', 'engineering', 'design', 'marketing'],
    agents: [
      { role: 'Chief Technology Officer', department: 'executive', level: 'c_suite', personality_preset: 'visionary_leader', tier: 'large' },
      { role: 'Product Manager', department: 'product', level: 'senior', personality_preset: 'strategic_planner', tier: 'medium' },
      { role: 'Senior Backend Engineer', department: 'engineering', level: 'senior', personality_preset: 'code_craftsman', tier: 'large' },
      { role: 'Frontend Engineer', department: 'engineering', level: 'mid', personality_preset: 'rapid_prototyper', tier: 'medium' },
      { role: 'Product Designer', department: 'design', level: 'mid', personality_preset: 'user_advocate', tier: 'medium' },
      { role: 'Growth Marketer', department: 'marketing', level: 'mid', personality_preset: 'growth_hacker', tier: 'small' },
    ],
  },
  {
    name: 'support_desk',
    display_name: 'Support Desk',
    description:
      'A customer support operation that answers tickets, escalates bugs to engineering, keeps the help ' +
      'centre up to date and looks after key accounts. Replies are supervised because they reach customers.',
    tags: ['support', 'customer-success', 'helpdesk'],
    autonomy_level: 'supervised',
    workflow: 'event_driven',
    departments: ['support', 'engineering', 'sales'],
    agents: [
      { role: 'Support Lead', department: 'support', level: 'lead', personality_preset: 'team_diplomat', tier: 'medium' },
      { role: 'Senior Support Engineer', department: 'support', level: 'senior', personality_preset: 'technical_communicator', tier: 'large' },
      { role: 'Support Specialist', department: 'support', level: 'mid', personality_preset: 'empathetic_mentor', tier: 'small' },
      { role: 'Junior Support Specialist', department: 'support', level: 'junior', personality_preset: 'eager_learner', tier: 'small' },
      { role: 'Knowledge Base Writer', department: 'support', level: 'mid', personality_preset: 'technical_communicator', tier: 'small' },
      { role: 'Escalation Engineer', department: 'engineering', level: 'senior', personality_preset: 'methodical_analyst', tier: 'large' },
      { role: 'Customer Success Manager', department: 'sales', level: 'mid', personality_preset: 'client_advisor', tier: 'medium' },
    ],
  },
];

/** The builtin templates, validated at import, sorted by name. */
export const TEMPLATES: readonly CompanyTemplate[] = Object.freeze(
  z
    .array(CompanyTemplate)
    .parse(BUILTIN_TEMPLATES)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
);

export function findTemplate(name: string): CompanyTemplate | undefined {
  return TEMPLATES.find((template) => template.name === name);
}

export function toTemplateInfo(template: CompanyTemplate): TemplateInfo {
  return {
    name: template.name,
    display_name: template.display_name,
    description: template.description,
    source: 'builtin',
    tags: [...template.tags],
    agent_count: template.agents.length,
    department_count: template.departments.length,
    autonomy_level: template.autonomy_level,
    workflow: template.workflow,
  };
}
