/** The pitch every ingestion benchmark posts (a forwarded-style message with one link ask). */
export const PITCH = {
  from: 'jane@prospect.io',
  fromName: 'Jane Prospect',
  subject: 'Quick link suggestion for your SEO article',
  bodyText:
    'Hi there,\nI loved your article https://example.test/blog/seo-tips.\nWould you consider adding a link to our guide https://prospect.io/schema-guide with the anchor text "schema markup guide"?\nSuggested sentence: "For the details, see this schema markup guide."\nThanks, Jane',
};
